package pipeline

import (
	"fmt"
	"strings"
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

// CheckCPU reports whether the process may run on cpu, as a pin to it
// needs: sched_setaffinity refuses a CPU outside the process's set (one the
// machine lacks, or a container's cpuset leaves out). The error lists the
// CPUs it may run on.
func CheckCPU(cpu int) error {
	var set [cpuSetWords]uint64
	// pid 0 is the calling thread; every thread of the process starts with
	// the set of the one that made it.
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if errno != 0 {
		return fmt.Errorf("sched_getaffinity: %w", errno)
	}
	if cpu >= 0 && cpu < cpuSetWords*64 && set[cpu/64]&(1<<(cpu%64)) != 0 {
		return nil
	}
	var allowed []string
	for c := 0; c < cpuSetWords*64; c++ {
		if set[c/64]&(1<<(c%64)) == 0 {
			continue
		}
		end := c
		for end+1 < cpuSetWords*64 && set[(end+1)/64]&(1<<((end+1)%64)) != 0 {
			end++
		}
		if end > c {
			allowed = append(allowed, fmt.Sprintf("%d-%d", c, end))
		} else {
			allowed = append(allowed, fmt.Sprint(c))
		}
		c = end
	}
	return fmt.Errorf("CPU %d is not one this process may run on (CPUs %s)", cpu, strings.Join(allowed, ","))
}
