package web

import (
	"bufio"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/train"
)

// Regions is the BFC allocator's memory at an OOM, region by region, as the page draws it. It
// is read from the allocator's log (train.OOM.Log), which is TF's dump byte for byte
// (bfc_allocator.cc BFCAllocator::DumpMemoryLog: "Next region of size N", then one line per
// chunk in address order, "InUse at ADDR of size S next N" or "Free  at ..."; then
// RenderOccupancy's 100-character map), so a log pasted from a real TF job reads the same.
type Regions struct {
	Regions []Region `json:"regions"`
	// InUse and Free add up the chunks; LargestFree is the largest free chunk, the largest
	// request that could still be served without growing the pool.
	InUse       int64 `json:"in_use"`
	Free        int64 `json:"free"`
	LargestFree int64 `json:"largest_free"`
	// Waste is the part of InUse that no request asked for: rounding, and the tail of a free
	// chunk too small to split off (0 when the sizes asked for are not known).
	Waste int64 `json:"waste"`
	// Occupancy is RenderOccupancy's map: '*' requested bytes in use, 'x' rounding waste, '_'
	// free, over all regions in order.
	Occupancy string `json:"occupancy,omitempty"`
}

// Region is one region taken from the device (cudaMalloc).
type Region struct {
	Size   int64   `json:"size"`
	Chunks []Chunk `json:"chunks"`
}

// Chunk is one chunk of a region. Requested is what the chunk in use was asked for (0 when
// free, or when a log alone gives the layout: TF's dump prints chunk sizes only).
type Chunk struct {
	Size      int64 `json:"size"`
	InUse     bool  `json:"in_use"`
	Requested int64 `json:"requested,omitempty"`
}

// NewRegions is the pool at OOM o: the allocator's own layout, with each chunk's requested
// size, when it has one (train.OOM.Regions), else what ParseRegions reads from the log. The
// occupancy map comes from the log either way. Nil without a BFC pool.
func NewRegions(o *train.OOM) *Regions {
	parsed := ParseRegions(o.Log)
	if len(o.Regions) == 0 {
		return parsed
	}
	var out Regions
	if parsed != nil {
		out.Occupancy = parsed.Occupancy
	}
	for _, r := range o.Regions {
		reg := Region{Size: r.Size}
		for _, c := range r.Chunks {
			reg.Chunks = append(reg.Chunks, Chunk{Size: c.Size, InUse: c.InUse, Requested: c.Requested})
			if c.InUse {
				out.InUse += c.Size
				out.Waste += c.Size - c.Requested
			} else {
				out.Free += c.Size
				out.LargestFree = max(out.LargestFree, c.Size)
			}
		}
		out.Regions = append(out.Regions, reg)
	}
	return &out
}

// ParseRegions reads the regions out of a BFC allocator's OOM log; nil when the log has no
// dump (cuda_malloc_async and the platform allocator have none).
func ParseRegions(log string) *Regions {
	var out Regions
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Next region of size "):
			n, err := strconv.ParseInt(strings.TrimPrefix(line, "Next region of size "), 10, 64)
			if err != nil {
				continue
			}
			out.Regions = append(out.Regions, Region{Size: n})
		case strings.HasPrefix(line, "InUse at ") || strings.HasPrefix(line, "Free  at "):
			if len(out.Regions) == 0 {
				continue
			}
			_, rest, ok := strings.Cut(line, " of size ")
			if !ok {
				continue
			}
			size, _, _ := strings.Cut(rest, " ")
			n, err := strconv.ParseInt(size, 10, 64)
			if err != nil {
				continue
			}
			c := Chunk{Size: n, InUse: strings.HasPrefix(line, "InUse")}
			r := &out.Regions[len(out.Regions)-1]
			r.Chunks = append(r.Chunks, c)
			if c.InUse {
				out.InUse += n
			} else {
				out.Free += n
				out.LargestFree = max(out.LargestFree, n)
			}
		case len(line) == 100 && strings.Trim(line, "*x_") == "":
			out.Occupancy = line
		}
	}
	if len(out.Regions) == 0 {
		return nil
	}
	return &out
}
