#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mldebug::fuzzing::run("text_log", data);
});
