package analysis

import (
	"strings"

	"github.com/gpusim/gpusim/train"
)

// Run-mean DLE figures: three README versions of TensorFlow/LanguageModeling/BERT give, for
// SQuAD fine-tuning, the mean throughput of the whole training run instead of its steady
// state, so each of their figures carries the run's one-off costs spread over its steps:
//
//   - 8749cf39 (19.06) and 58a3ed6b (19.08): "Performance (in sentences per second) is the
//     mean throughput from 2 epochs", run_squad.py's "Throughput Average (sentences/sec) with
//     overhead" = num_train_steps * global_batch_size / train_time_elapsed, the wall time of
//     estimator.train (graph, session, checkpoint restore and saves, the XLA compile of the
//     first step, every step). Their pre-training tables say "steady state throughput".
//   - ec9eaf73 (19.03): "Performance numbers ... were averaged over an entire training epoch",
//     run_squad.py's "Training Performance" = num_train_steps * global_batch_size /
//     train_time_wo_startup, the sum of every session.run's time (_LogTrainRunHook), the
//     first step's compile and the checkpoint saves included. NVIDIA's next edit of the same
//     tables (83fceae5, "changing perf numbers to steady state throughput", read at
//     fb55bd24) re-measured them with the same container and script as steady state.
//
// The run is num_train_steps = int(len(train_examples) / global_batch_size * num_train_epochs)
// updates (run_squad.py at the three commits): SQuAD v1.1's 87,599 training questions
// (read_squad_examples; DeepLearningExamples issue 51 quotes the script's "Sentences processed
// = 175198" for two epochs) and scripts/run_squad.sh's epochs=2.0. A cost paid once per run is
// then per step proportional to the global batch, batch per GPU times GPUs: what those tables'
// multi-GPU cells show and the steady-state tables of the same containers do not.

// dleRunMeanTables are the BERT README commits whose SQuAD tables give run means.
var dleRunMeanTables = map[string]bool{"ec9eaf73": true, "8749cf39": true, "58a3ed6b": true}

const (
	// squadV11TrainExamples is SQuAD v1.1's training questions (train-v1.1.json).
	squadV11TrainExamples = 87599
	// dleSQuADEpochs is scripts/run_squad.sh's epochs at the run-mean commits.
	dleSQuADEpochs = 2.0
)

// dleRunSteps is the optimizer updates of the run whose mean a DLE row gives, 0 for a
// steady-state figure.
func dleRunSteps(sourcePath, commit, model string, gpus, batch int) int {
	if sourcePath != "TensorFlow/LanguageModeling/BERT/README.md" || !dleRunMeanTables[commit] ||
		!isSQuADModel(model) || gpus < 1 || batch < 1 {
		return 0
	}
	return int(float64(squadV11TrainExamples) / float64(batch*gpus) * dleSQuADEpochs)
}

// isSQuADModel reports whether a DLE model spec is the SQuAD fine-tuning BERT (sequence 384,
// no pre-training head).
func isSQuADModel(spec string) bool {
	base, _, _ := strings.Cut(spec, ",")
	return base == "bert-large:seq=384"
}

// runMeanThroughput is the throughput a run of steps updates averages: its samples over its
// steps at the simulated step time plus what the simulation pays once per run (the XLA
// compile). Of the run-level costs only that one is simulated; graph construction, grappler,
// the checkpoint restore and saves are not, so a prediction stays above such a figure.
func runMeanThroughput(res *train.Result, steps int) float64 {
	if steps <= 0 || res.StepTime <= 0 {
		return res.Throughput
	}
	steady := float64(steps) * res.StepTime
	return res.Throughput * steady / (steady + res.XLACompileTime)
}
