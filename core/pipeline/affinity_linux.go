package pipeline

import (
	"fmt"
	"syscall"
	"unsafe"
)

// cpuSetWords bounds the CPUs a pin can name (64 × 16 = 1,024, the kernel's
// default CONFIG_NR_CPUS range).
const cpuSetWords = 16

// pinThread restricts the calling OS thread to one CPU. The caller has locked
// its goroutine to the thread, so the pin stays with the goroutine.
func pinThread(cpu int) error {
	if cpu < 0 || cpu >= cpuSetWords*64 {
		return fmt.Errorf("cpu %d out of range [0, %d)", cpu, cpuSetWords*64)
	}
	var set [cpuSetWords]uint64
	set[cpu/64] = 1 << (cpu % 64)
	// pid 0 is the calling thread.
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if errno != 0 {
		return fmt.Errorf("sched_setaffinity: %w", errno)
	}
	return nil
}
