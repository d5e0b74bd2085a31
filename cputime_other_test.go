//go:build !unix

package heliac_test

import "time"

// cpuTime returns 0 where the process's CPU time is not at hand.
func cpuTime() time.Duration { return 0 }
