#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mldebug::fuzzing::run("run_trace", data);
});
