package views

// diagramMessages are the words of the sequence diagram.
var diagramMessages = map[string]message{}
