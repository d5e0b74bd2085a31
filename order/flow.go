package order

// flowNet is a directed network for maximum flow (Dinic's algorithm), with
// int64 capacities. Node 0 is the source and node 1 the sink.
type flowNet struct {
	head  []int32 // first edge of each node, -1 for none
	next  []int32 // next edge of the same node
	to    []int32
	cap   []int64 // residual capacity
	level []int32
	iter  []int32
	queue []int32
}

// inf is a capacity no cut pays: larger than every sum of sizes.
const inf = int64(1) << 62

func (f *flowNet) reset(nodes int) {
	f.head = f.head[:0]
	for range nodes {
		f.head = append(f.head, -1)
	}
	f.next, f.to, f.cap = f.next[:0], f.to[:0], f.cap[:0]
}

func (f *flowNet) node() int32 {
	f.head = append(f.head, -1)
	return int32(len(f.head) - 1)
}

// edge adds an edge a -> b of capacity c and its residual twin.
func (f *flowNet) edge(a, b int32, c int64) {
	f.to = append(f.to, b, a)
	f.cap = append(f.cap, c, 0)
	f.next = append(f.next, f.head[a], f.head[b])
	e := int32(len(f.to) - 2)
	f.head[a], f.head[b] = e, e+1
}

// maxFlow returns the maximum flow from node 0 to node 1, or limit when it
// reaches limit (the caller needs to know no more).
func (f *flowNet) maxFlow(limit int64) int64 {
	n := len(f.head)
	f.level = append(f.level[:0], make([]int32, n)...)
	f.iter = append(f.iter[:0], make([]int32, n)...)
	var total int64
	for total < limit && f.bfs() {
		copy(f.iter, f.head)
		for total < limit {
			d := f.dfs(0, limit-total)
			if d == 0 {
				break
			}
			total += d
		}
	}
	return min(total, limit)
}

func (f *flowNet) bfs() bool {
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[0] = 0
	f.queue = append(f.queue[:0], 0)
	for i := 0; i < len(f.queue); i++ {
		v := f.queue[i]
		for e := f.head[v]; e >= 0; e = f.next[e] {
			if w := f.to[e]; f.cap[e] > 0 && f.level[w] < 0 {
				f.level[w] = f.level[v] + 1
				f.queue = append(f.queue, w)
			}
		}
	}
	return f.level[1] >= 0
}

func (f *flowNet) dfs(v int32, up int64) int64 {
	if v == 1 {
		return up
	}
	for ; f.iter[v] >= 0; f.iter[v] = f.next[f.iter[v]] {
		e := f.iter[v]
		w := f.to[e]
		if f.cap[e] <= 0 || f.level[w] != f.level[v]+1 {
			continue
		}
		if d := f.dfs(w, min(up, f.cap[e])); d > 0 {
			f.cap[e] -= d
			f.cap[e^1] += d
			return d
		}
	}
	return 0
}
