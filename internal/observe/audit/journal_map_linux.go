package audit

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// mapSegments says segments are mapped into memory, not written.
const mapSegments = true

// mapSegment allocates n bytes of blocks to f, so that no later copy
// needs the disk to find room, and maps them. A file system without
// fallocate gets f extended instead.
func mapSegment(f *os.File, n int64) ([]byte, error) {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, n)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		err = f.Truncate(n)
	}
	if err != nil {
		return nil, fmt.Errorf("allocating %s: %w", f.Name(), err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	go populate(m)
	return m, nil
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// populate faults m's pages in writable, without changing what they hold,
// so that a copy finds them ready: each first write to a page of the file
// otherwise faults, 10–35 µs on ext4 in the harness. It runs beside the
// copies; an older kernel refuses it, and a segment closed meanwhile
// ends it. Either way only that time is lost.
func populate(m []byte) {
	syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(len(m)), madvPopulateWrite) //nolint:errcheck // see above
}

func unmapSegment(m []byte) { syscall.Munmap(m) } //nolint:errcheck // nothing to do about it

// copyMapped copies b to the start of dst, a mapped segment. A fault on
// the way (the disk failing under the page, say) is an error, not the
// process's end.
func copyMapped(dst, b []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("a memory fault writing the mapped segment: %v", r)
		}
	}()
	copy(dst, b)
	return nil
}
