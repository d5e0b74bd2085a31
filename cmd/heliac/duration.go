package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// durationValue is a time.Duration flag whose error for a bare number
// (--time-limit 5) suggests the units, rather than only saying that one
// is missing.
type durationValue time.Duration

func newDurationValue(p *time.Duration, def time.Duration) *durationValue {
	*p = def
	return (*durationValue)(p)
}

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil {
		*d = durationValue(v)
		return nil
	}
	if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
		return fmt.Errorf("%s has no unit: write %ss for seconds or %sms for milliseconds", s, s, s)
	}
	return fmt.Errorf("%s is not a duration (such as 2s, 500ms or 1m30s)", s)
}

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Type() string { return "duration" }

// durationFlag defines a duration flag that suggests units.
func durationFlag(f *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	f.Var(newDurationValue(p, def), name, usage)
}
