package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
)

// handleEmails lists what the lab's mailbox received over SMTP, newest
// first, with the count of all.
func handleEmails(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 100, 1, 1000, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		mb, err := h.Notify.Mailbox(c.Request().Context(), labOf(c), limit)
		if err != nil {
			return err
		}
		emails := mb.Emails
		if emails == nil {
			emails = []sim.Email{}
		}
		return c.JSON(http.StatusOK, struct {
			Emails  []sim.Email       `json:"emails"`
			Count   int64             `json:"count"`
			Doubled []sim.OrderEmails `json:"doubled"` // orders with more than one email (at most 10)
		}{emails, mb.Count, append([]sim.OrderEmails{}, mb.Doubled...)})
	}
}

// handleMessages lists the queue's messages, newest first, with their
// deliveries to the consumer.
func handleMessages(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 100, 1, 1000, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		ms, err := h.Notify.Messages(c.Request().Context(), labOf(c), limit)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			Messages []sim.Message `json:"messages"`
		}{ms})
	}
}
