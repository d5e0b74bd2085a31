package plan

import "github.com/heliac/heliac/traffic"

// BankTraffic is what one bank moves under a plan: the bytes its
// allocations are read and written per inference (Alloc.Traffic summed
// over the arenas in the bank; a constant read in place counts against
// its cold bank, a staged one against the bank it is staged into), and
// the one-time staging copy: the staged constant arenas' images read from
// this bank, or written into it, once before the first run.
type BankTraffic struct {
	Bank         string
	PerInference traffic.Bytes
	Staging      traffic.Bytes
}

// BankTraffic returns the traffic of every bank of the plan's platform
// that holds an arena or is a staging source, in the platform's order.
func (p *Plan) BankTraffic() []BankTraffic {
	by := map[string]*BankTraffic{}
	get := func(bank string) *BankTraffic {
		if by[bank] == nil {
			by[bank] = &BankTraffic{Bank: bank}
		}
		return by[bank]
	}
	memory := map[ArenaID]string{}
	for _, a := range p.Arenas {
		memory[a.ID] = a.Memory
		get(a.Memory)
		if a.Staged() {
			get(a.Source).Staging.Read += a.Size
			get(a.Memory).Staging.Written += a.Size
		}
	}
	for _, a := range p.Allocs {
		if m, ok := memory[a.Arena]; ok {
			t := get(m)
			t.PerInference = t.PerInference.Add(a.Traffic)
		}
	}
	var out []BankTraffic
	for _, b := range p.Platform.Banks {
		if t := by[b.Name]; t != nil {
			out = append(out, *t)
			delete(by, b.Name)
		}
	}
	// Banks the platform does not list (none in a valid plan), by arena order.
	for _, a := range p.Arenas {
		if t := by[a.Memory]; t != nil {
			out = append(out, *t)
			delete(by, a.Memory)
		}
	}
	return out
}
