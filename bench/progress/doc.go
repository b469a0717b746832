// Package progress runs the load harnesses' progress lines: a callback
// every interval on one goroutine, stopped and waited for by the harness
// when the run ends. What a line says is the harness's.
package progress
