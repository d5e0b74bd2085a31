//go:build unix

package inputfile

import "syscall"

// openFlags keeps open from blocking when the path turns into a FIFO
// between Stat and open; the file is then refused as not regular.
const openFlags = syscall.O_NONBLOCK
