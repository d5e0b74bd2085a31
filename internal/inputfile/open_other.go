//go:build !unix

package inputfile

// openFlags adds nothing where there are no FIFOs to block on.
const openFlags = 0
