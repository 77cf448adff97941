package api

import "strconv"

// The API's routes, as Echo patterns: every path of the JSON API is here.
const (
	Prefix = "/api/v1"

	RouteLabs       = Prefix + "/labs"
	RouteLab        = RouteLabs + "/:lab"
	RouteSettings   = RouteLab + "/settings"
	RouteCharges    = RouteLab + "/charges"
	RoutePayments   = RouteLab + "/payments"
	RoutePayment    = RoutePayments + "/:id"
	RouteOperations = RouteLab + "/operations"
	RouteOperation  = RouteOperations + "/:op"
	RouteRetry      = RouteOperation + "/retry"
	RouteRace       = RouteOperation + "/race"
	RouteReset      = RouteLab + "/reset"
	RouteEmails     = RouteLab + "/emails"
	RouteMessages   = RouteLab + "/messages"
	RouteOrders     = RouteLab + "/orders"
	RouteOrder      = RouteOrders + "/:order"
	RouteClock      = RouteLab + "/clock"
	RouteKeys       = RouteLab + "/keys"
	RouteScenario   = RouteLab + "/scenario"
	RouteLesson     = RouteLab + "/lesson"
	RouteLessonUp   = RouteLesson + "/setup"
	RouteLessonStep = RouteLesson + "/step"
	RouteClass      = RouteLab + "/class"
	RouteClassAsk   = RouteClass + "/questions"
	RouteClassShow  = RouteClass + "/reveal"
	RouteStepped    = RouteLab + "/stepped-races"
	RouteSteppedOne = RouteStepped + "/:race"
	RouteStep       = RouteSteppedOne + "/step"
	RouteStepRun    = RouteSteppedOne + "/run"
	RouteStorms     = RouteLab + "/storms"
	RouteStorm      = RouteStorms + "/:storm"
	RouteCompare    = Prefix + "/compare"
	RouteComparison = RouteCompare + "/:id"
)

// The students' routes: a class's join code opens only its voting page
// (SPEC, "Predict, then see"), never its lab.
const (
	RouteJoin       = "/join/:code"
	RouteJoinNow    = RouteJoin + "/now"
	RouteJoinVotes  = RouteJoin + "/votes"
	RouteJoinQR     = RouteJoin + "/qr.svg"
	RouteJoinScreen = RouteJoin + "/screen"
)

// JoinPath is the address of a class's voting page.
func JoinPath(code string) string { return "/join/" + code }

// JoinQRPath is the address of the QR code of a class's join address.
func JoinQRPath(code string) string { return JoinPath(code) + "/qr.svg" }

// JoinScreenPath is the address of a class's join screen, for the
// projector: its QR code on the whole window.
func JoinScreenPath(code string) string { return JoinPath(code) + "/screen" }

// LabPath is the API's address of a lab: the base of all its routes.
func LabPath(lab string) string { return RouteLabs + "/" + lab }

// SteppedPath is the API path of a lab's stepped race.
func SteppedPath(lab, race string) string { return LabPath(lab) + "/stepped-races/" + race }

// StormPath is the API path of a lab's storm.
func StormPath(lab, storm string) string { return LabPath(lab) + "/storms/" + storm }

// ChargesPath is the protected endpoint of a lab.
func ChargesPath(lab string) string { return LabPath(lab) + "/charges" }

// PaymentPath is the address of one payment: a new charge's Location.
func PaymentPath(lab string, id int64) string {
	return LabPath(lab) + "/payments/" + strconv.FormatInt(id, 10)
}

// OrderPath is the address of one order of the lab's resource.
func OrderPath(lab, orderID string) string { return LabPath(lab) + "/orders/" + orderID }

// OperationPath is the address of one operation of the lab's client.
func OperationPath(lab, op string) string { return LabPath(lab) + "/operations/" + op }
