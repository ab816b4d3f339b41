// Package scenarios reads gpusim's scenario files: YAML documents whose keys are the stable
// scenario keys of docs/design.md (model, batch, precision, tf32, xla, framework, tf_version,
// keras_version, optimizer, steps, seed, hardware.gpu, hardware.count, hardware.topology,
// cuda_visible_devices, strategy.name, strategy.num_packs, strategy.compression,
// accumulation_steps, steps_per_execution, fit_from_arrays, fit_arrays_samples,
// input_on_device, tf.layout_optimizer, tf.resource_variables, l2_decay, static_loss_scale,
// memory.mode/growth/growth_after_limit/limit_mib/fraction/
// allocator/gc, input.prefetch, input.map.parallel_calls, input.map.threads, input.cache, env,
// processes) plus name, description and
// simulator.timeline_points / simulator.utilization_samples / simulator.fast_forward /
// simulator.symmetric_replicas. Keys()
// lists them all, with `gpusim run --help`.
//
// Parse and Load start from train.DefaultConfig and overlay the document; Set applies one
// "--set key=value" override with the same setters and validation (the value is YAML:
// "true", "64", "[0, 1]", "{name: x}"; a value that starts with '@' or '`', which YAML
// reserves, is a string, so hardware.gpu=@profile.yaml needs no quotes). In a file such a value
// must be quoted (gpu: "@profile.yaml"); unquoted, the error names the line and suggests the
// quotes. Every error is a *Error naming the place — the file and
// line ("run.yaml:7") or the --set argument — and the key: unknown keys, wrong types, negative
// numbers, unknown GPUs or models, contradicting memory options, a file that sets no keys
// (empty or only comments) or holds a second YAML document, YAML syntax errors
// ("bad.yaml:1: yaml syntax: did not find expected ',' or ']'", with yaml.v3's line: see
// syntaxError for when it is not the offending one). memory.growth_after_limit orders the
// calls: set_memory_growth after set_logical_device_configuration, which TF rejects
// (ValueError, a train.FieldError on Memory.GrowthAfterLimit when the run starts).
//
// scenarios is the only package that knows key names: train's errors name Go field paths
// (train.FieldError: "Memory.LimitMiB", "Processes[0].UsedBytes"), Key maps a path to its key
// and Scenario.RunError turns a run's error into a *Error naming the file:line (or --set)
// that set the key.
//
// The built-in library is embedded from builtin/*.yaml: adding a built-in scenario is adding
// one YAML file there (Names lists them, Builtin loads one, Resolve takes a path or a name).
//
// Example:
//
//	sc, err := scenarios.Resolve("resnet50-a100") // or a path, or "" for the default
//	if err == nil {
//		err = sc.Set("batch=512")
//	}
//	res, err := train.Run(ctx, sc.Config)
package scenarios
