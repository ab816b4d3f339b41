package allocator

import (
	"errors"
	"testing"
)

func TestMinSystemMemory(t *testing.T) {
	for _, tc := range []struct {
		available int64
		cc        int
		want      int64
	}{
		{1 << 30, 9, 225 << 20},  // below 2 GiB: 225 MiB whatever the card
		{16 << 30, 5, 500 << 20}, // Maxwell
		{16 << 30, 6, 500 << 20}, // Pascal
		{16 << 30, 7, 1050 << 20},
		{40 << 30, 8, 1536 << 20},
		{80 << 30, 9, 1800 << 20}, // Hopper
		{80 << 30, 10, 1800 << 20},
	} {
		if got := MinSystemMemory(tc.available, tc.cc); got != tc.want {
			t.Errorf("MinSystemMemory(%d, %d) = %d, want %d", tc.available, tc.cc, got, tc.want)
		}
	}
}

func TestMinSystemMemoryTF1(t *testing.T) {
	for _, tc := range []struct{ available, want int64 }{
		{1 << 30, 225 << 20},             // below 2 GiB
		{4 << 30, 314572800},             // 5% is 205 MiB: the 300 MiB floor
		{11_800_000_000, 590_000_000},    // a 12 GB Titan X: 5%
		{149_000_000_000, 7_450_000_000}, // H200: 5%, not 1800 MiB
	} {
		if got := MinSystemMemoryTF1(tc.available); got != tc.want {
			t.Errorf("MinSystemMemoryTF1(%d) = %d, want %d", tc.available, got, tc.want)
		}
	}
}

func TestDefaultLimit(t *testing.T) {
	const total, free = 150_754_820_096, 149_000_000_000
	for _, tc := range []struct {
		name     string
		free     int64
		cc       int
		fraction float64
		env      map[string]string
		want     int64
	}{
		{"free minus reserve", free, 9, 0, nil, free - 1800<<20},
		{"small card", 1 << 30, 7, 0, nil, 1<<30 - 225<<20},
		{"reserve above free keeps free", 200 << 20, 7, 0, nil, 200 << 20},
		{"fraction of total", free, 9, 0.5, nil, total / 2},
		{"TF_DEVICE_MIN_SYS_MEMORY_IN_MB", free, 9, 0, map[string]string{"TF_DEVICE_MIN_SYS_MEMORY_IN_MB": "100"}, free - 100<<20},
		{"min sys memory over free ignored", 50 << 20, 9, 0, map[string]string{"TF_DEVICE_MIN_SYS_MEMORY_IN_MB": "100"}, 50 << 20},
		{"min sys memory invalid ignored", free, 9, 0, map[string]string{"TF_DEVICE_MIN_SYS_MEMORY_IN_MB": "x"}, free - 1800<<20},
	} {
		if got := DefaultLimit(total, tc.free, tc.cc, tc.fraction, tc.env); got != tc.want {
			t.Errorf("%s: DefaultLimit = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func boolp(b bool) *bool { return &b }

func TestResolveTF(t *testing.T) {
	spec := H200Spec(0)
	specs2 := []DeviceSpec{spec, H200Spec(1)}
	free := int64(140 << 30)
	for _, tc := range []struct {
		name    string
		opts    Options
		n       int // devices
		wantErr string
		check   func(t *testing.T, c []LogicalConfig)
	}{
		{name: "default preallocates free minus 1800 MiB", n: 1, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].BFC.AllowGrowth || !c[0].Preallocate || c[0].Limit != free-1800<<20 || !c[0].BFC.GarbageCollection || c[0].Name != "GPU_0_bfc" {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "TF 1.x leaves 5% of free memory", n: 1, opts: Options{TF1: true}, check: func(t *testing.T, c []LogicalConfig) {
			if want := free - int64(float64(free)*0.05); c[0].Limit != want {
				t.Errorf("limit %d, want %d (free minus 5%%)", c[0].Limit, want)
			}
		}},
		{name: "growth", n: 2, opts: Options{Growth: boolp(true)}, check: func(t *testing.T, c []LogicalConfig) {
			if !c[0].BFC.AllowGrowth || !c[1].BFC.AllowGrowth || c[1].Name != "GPU_1_bfc" {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "growth differs", n: 2, opts: Options{GrowthByGPU: map[int]bool{0: true}},
			wantErr: "ValueError: Memory growth cannot differ between GPU devices"},
		{name: "growth set true and false", n: 2, opts: Options{GrowthByGPU: map[int]bool{0: true, 1: false}},
			wantErr: "ValueError: Memory growth cannot differ between GPU devices"},
		{name: "growth on every GPU one by one", n: 2, opts: Options{GrowthByGPU: map[int]bool{0: true, 1: true}}, check: func(t *testing.T, c []LogicalConfig) {
			if !c[0].BFC.AllowGrowth || !c[1].BFC.AllowGrowth {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "TF_FORCE_GPU_ALLOW_GROWTH=true", n: 1, opts: Options{Env: map[string]string{"TF_FORCE_GPU_ALLOW_GROWTH": "true"}}, check: func(t *testing.T, c []LogicalConfig) {
			if !c[0].BFC.AllowGrowth || c[0].Preallocate {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "TF_FORCE_GPU_ALLOW_GROWTH=false beats the config", n: 1, opts: Options{Growth: boolp(true), Env: map[string]string{"TF_FORCE_GPU_ALLOW_GROWTH": "false"}}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].BFC.AllowGrowth {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "TF_FORCE_GPU_ALLOW_GROWTH unparsable keeps config", n: 1, opts: Options{Growth: boolp(true), Env: map[string]string{"TF_FORCE_GPU_ALLOW_GROWTH": "1"}}, check: func(t *testing.T, c []LogicalConfig) {
			if !c[0].BFC.AllowGrowth {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "logical devices", n: 1, opts: Options{LogicalDevices: map[int][]int64{0: {1024, 2048}}}, check: func(t *testing.T, c []LogicalConfig) {
			if len(c) != 2 || c[0].Limit != 1<<30 || c[1].Limit != 2<<30 || c[1].Name != "GPU_1_bfc" || c[1].Physical != 0 ||
				c[1].Device != "/job:localhost/replica:0/task:0/device:GPU:1" {
				t.Errorf("got %+v", c)
			}
		}},
		{name: "growth then limit: growth ignored", n: 1, opts: Options{Growth: boolp(true), LogicalDevices: map[int][]int64{0: {4096}}}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].BFC.AllowGrowth || c[0].Limit != 4<<30 {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "limit then growth raises", n: 1, opts: Options{Growth: boolp(true), GrowthAfterLogical: true, LogicalDevices: map[int][]int64{0: {4096}}},
			wantErr: "ValueError: Cannot set memory growth on device when virtual devices configured"},
		{name: "limit plus forced growth", n: 1, opts: Options{LogicalDevices: map[int][]int64{0: {4096}}, Env: map[string]string{"TF_FORCE_GPU_ALLOW_GROWTH": "true"}}, check: func(t *testing.T, c []LogicalConfig) {
			if !c[0].BFC.AllowGrowth || c[0].Limit != 4<<30 {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "growth after init", n: 1, opts: Options{ModifiedAfterInit: "memory_growth"},
			wantErr: "RuntimeError: Physical devices cannot be modified after being initialized"},
		{name: "logical after init", n: 1, opts: Options{ModifiedAfterInit: "logical_devices"},
			wantErr: "RuntimeError: Virtual devices cannot be modified after being initialized"},
		{name: "visible after init", n: 1, opts: Options{ModifiedAfterInit: "visible_devices"},
			wantErr: "RuntimeError: Visible devices cannot be modified after being initialized"},
		{name: "fraction", n: 1, opts: Options{Fraction: 0.3}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].Limit != int64(float64(spec.CUDATotalBytes())*0.3) { // cuMemGetInfo total x fraction
				t.Errorf("got %d", c[0].Limit)
			}
		}},
		{name: "TF_GPU_ALLOCATOR", n: 1, opts: Options{Env: map[string]string{"TF_GPU_ALLOCATOR": "cuda_malloc_async"}}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].Kind != "cuda_malloc_async" || c[0].Name != "gpu_async_0" {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "TF_GPU_ALLOCATOR=cuda_malloc", n: 1, opts: Options{Env: map[string]string{"TF_GPU_ALLOCATOR": "cuda_malloc"}}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].Kind != "platform" {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "gc env off", n: 1, opts: Options{Env: map[string]string{"TF_ENABLE_GPU_GARBAGE_COLLECTION": "false"}}, check: func(t *testing.T, c []LogicalConfig) {
			if c[0].BFC.GarbageCollection {
				t.Errorf("got %+v", c[0])
			}
		}},
		{name: "unknown device in logical config", n: 1, opts: Options{LogicalDevices: map[int][]int64{3: {1024}}},
			wantErr: "ValueError: Unrecognized device: PhysicalDevice(name='/physical_device:GPU:3', device_type='GPU')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs := specs2[:tc.n]
			frees := []int64{free, free}[:tc.n]
			c, err := Resolve(tc.opts, specs, frees)
			if tc.wantErr != "" {
				var ce *ConfigError
				if err == nil || err.Error() != tc.wantErr || !errors.As(err, &ce) {
					t.Fatalf("Resolve error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestResolveJAX(t *testing.T) {
	specs := []DeviceSpec{H200Spec(0)}
	free := []int64{36_404_002_816} // a second process beside one holding 105 GiB: the limit ignores it
	// Limits measured with JAX 0.11.2 on the H200 (bytes_limit in testdata/traces).
	for _, tc := range []struct {
		name      string
		env       map[string]string
		growth    bool
		limit     int64
		wantError bool
	}{
		{"default 75% preallocated", nil, false, 112583507968, false},
		{"preallocate false", map[string]string{"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, true, 112583507968, false},
		{"fraction", map[string]string{"XLA_CLIENT_MEM_FRACTION": "0.005"}, false, 750780416, false},
		{"fraction 0.01", map[string]string{"XLA_CLIENT_MEM_FRACTION": "0.01"}, false, 1501560832, false},
		{"fraction 0.002", map[string]string{"XLA_CLIENT_MEM_FRACTION": "0.002"}, false, 301989888, false},
		{"fraction 0.003", map[string]string{"XLA_CLIENT_MEM_FRACTION": "0.003"}, false, 450887680, false},
		{"old fraction name", map[string]string{"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}, false, 75054972928, false},
		{"bad fraction", map[string]string{"XLA_CLIENT_MEM_FRACTION": "2"}, false, 0, true},
	} {
		c, err := Resolve(Options{Framework: "jax", Env: tc.env}, specs, free)
		if tc.wantError {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c[0].BFC.AllowGrowth != tc.growth || c[0].Limit != tc.limit || c[0].BFC.GarbageCollection {
			t.Errorf("%s: got %+v, want growth %v limit %d, gc off", tc.name, c[0], tc.growth, tc.limit)
		}
	}
}
