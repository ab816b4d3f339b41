package train_test

import (
	"testing"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// TestComputeTimeOneReplica: ComputeTime prices one replica of a Horovod job with
// Compression.fp16 and another process on its second card (what bert-squad-tf1-dgx1 and
// cuda-visible-devices have) as it prices the plain one-GPU job: neither the all-reduce's
// compression nor a process on a GPU the one-GPU copy lacks is part of a replica's compute.
func TestComputeTimeOneReplica(t *testing.T) {
	plain := traintest.Mirrored4xA100()
	job := plain
	job.Strategy, job.HorovodCompression = "horovod", "fp16"
	job.Processes = []train.Process{{Name: "other", GPUs: []int{1}, UsedBytes: 1 << 30}}
	if err := job.Validate(); err != nil {
		t.Fatalf("the job itself: %v", err)
	}
	want, err := train.ComputeTime(plain, 256)
	if err != nil {
		t.Fatal(err)
	}
	got, err := train.ComputeTime(job, 256)
	if err != nil {
		t.Fatalf("ComputeTime of the Horovod job: %v", err)
	}
	if got != want || want <= 0 {
		t.Errorf("ComputeTime = %v, want the one-GPU job's %v", got, want)
	}
}
