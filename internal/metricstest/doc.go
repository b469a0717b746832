// Package metricstest reads a running venue's Prometheus metrics for the
// tests that run one (server, cmd/fixvenue), so that each does not write its
// own scraper and line parser. It scrapes with admintest.Call.
//
// Contract: Scrape fails the test (t.Fatal) when the metrics endpoint cannot
// be read or answers other than 200 OK; Value and Float fail it when the
// text has no such metric (or, for Float, its value is not a number).
// Limits: admintest's, a scrape waits at most admintest.CallTimeout and
// reads at most admintest.BodyBytesMax of the metrics text.
package metricstest
