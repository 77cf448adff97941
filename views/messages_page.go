package views

// pageMessages are the words of the lab's page, in English and Russian.
var pageMessages = map[string]message{}
