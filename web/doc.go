// Package web is gpusim's workshop page (gpusim serve): one page, served from assets embedded
// in the binary, on which a class picks a pitfall of the TF GPU-settings guide, changes the
// settings a TF program would (model, batch, GPU, count, precision, XLA, memory mode, limit,
// growth, prefetch, parallel calls, cache, accumulation, CUDA_VISIBLE_DEVICES, optimizer,
// strategy, XLA's input shapes, tf.device, other processes on the cards) and sees each change
// re-simulated: memory within a step and over the run with every other process's share of the
// card and the OOM on the curve, the pool's growth, the allocator's regions to scale at an OOM
// (in use, free, and what nobody asked for inside chunks in use), GPU utilization over time,
// each step's time and XLA's compile time, the step by category, the diagnosis and its ranked
// remedies; for two settings side by side on shared axes, with the change from A to B; and a
// plan panel that searches setting A's settings for a goal (gpusim plan --space small) and
// shows the ranked plans, why each ranks there and the top plan's TF code.
//
// The API is three GET endpoints; every answer is JSON and every bad request a 400 with
// {"error": message}:
//
//	GET /api/lessons                     the pitfalls in docs/pitfalls.md's order (then the
//	                                     other built-ins), each with its explanation, and the
//	                                     controls
//	GET /api/run?scenario=NAME&set=k=v   a built-in run with gpusim run's --set overrides:
//	                                     the result as gpusim run -o json prints it, the
//	                                     command, the YAML and the TF program it stands for,
//	                                     and what the page draws beyond it (page.go: the
//	                                     run's throughput, the other processes' shares,
//	                                     the regions at an OOM)
//	GET /api/plan?scenario=NAME&set=k=v&goal=G[&price=P][&dataset_size=N&epochs=E]
//	                                     the plan panel: gpusim plan NAME --space small
//	                                     --goal G (throughput, time-to-train, cost at P
//	                                     $/GPU-hour, max-batch) as -o json prints it, the
//	                                     ranked plans with intervals, diagnosis, --set
//	                                     lines and TF code, and that command (plan.go)
//
// Overrides go through scenarios' --set path, so an error reads as the CLI's ("--set
// batch=0: batch: must be positive, got 0"). Only built-in scenarios and GPU profiles run: the
// server reads no file and serves nothing but its embedded assets. Each request's simulations
// are bounded by Options.Timeout and run in at most Options.Slots at once; a request the page
// cancels (a newer setting replaced it) stops waiting at once.
package web
