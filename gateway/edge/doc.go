// Package edge is the FIX edge (work in progress).
package edge
