package allocator

// binEntry is one free chunk in a bin, keyed like BFCAllocator::Bin::ChunkComparator: by size,
// then by address.
type binEntry struct {
	size, addr int64
	h          int32
}

// bin is a sorted slice of free chunks. Bins stay short in practice (the free chunks of one
// power-of-two size class), so a binary search plus a memmove beats a tree and allocates nothing
// once the slice has grown.
type bin struct{ e []binEntry }

func less(s1, a1, s2, a2 int64) bool { return s1 < s2 || (s1 == s2 && a1 < a2) }

// lowerBound is the index of the first entry with size >= size.
func (b *bin) lowerBound(size int64) int {
	lo, hi := 0, len(b.e)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.e[m].size < size {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// find is the index of the entry (size, addr); it panics if absent (a corrupted bin).
func (b *bin) find(size, addr int64) int {
	lo, hi := 0, len(b.e)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(b.e[m].size, b.e[m].addr, size, addr) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(b.e) || b.e[lo].size != size || b.e[lo].addr != addr {
		panic("allocator: could not find chunk in bin")
	}
	return lo
}

func (b *bin) insert(x binEntry) {
	lo, hi := 0, len(b.e)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(b.e[m].size, b.e[m].addr, x.size, x.addr) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	b.e = append(b.e, binEntry{})
	copy(b.e[lo+1:], b.e[lo:])
	b.e[lo] = x
}

func (b *bin) removeAt(i int) {
	copy(b.e[i:], b.e[i+1:])
	b.e = b.e[:len(b.e)-1]
}

func (b *bin) last() binEntry { return b.e[len(b.e)-1] }
