// Package loadmix names the order flows of the load harnesses (the FIX load
// generator bench/loadgen and the pipeline harness bench/pipeharness):
// passive, cross and mixed, parsed from and printed as those names. What
// each flow sends is the harness's: its package documents it.
package loadmix
