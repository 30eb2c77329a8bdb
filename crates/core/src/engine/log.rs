//! libmdbx's own log lines, routed to `tracing` (target `libmdbx`) instead of stderr.

use std::ffi::{CStr, c_int, c_uint};

use mdbx_sys as sys;

/// Routes libmdbx's own log messages (warnings and worse) to `tracing`, target `libmdbx`.
pub(crate) fn route_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // libmdbx formats each message into this buffer before calling the logger; it must live
        // for the rest of the process, so it is leaked once.
        let buffer: &'static mut [u8] = Box::leak(vec![0u8; 1024].into_boxed_slice());
        // SAFETY: sets process-global logging options once; `log_line` matches the callback
        // signature, never unwinds, and the buffer is valid for the process lifetime.
        unsafe {
            sys::mdbx_setup_debug_nofmt(
                sys::MDBX_LOG_WARN,
                sys::MDBX_DBG_DONTCHANGE,
                Some(log_line),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
            );
        }
    });
}

unsafe extern "C" fn log_line(
    level: sys::MDBX_log_level_t,
    function: *const std::ffi::c_char,
    line: c_int,
    msg: *const std::ffi::c_char,
    length: c_uint,
) {
    let text = if msg.is_null() {
        String::new()
    } else {
        // SAFETY: libmdbx passes `length` valid bytes at `msg` for the duration of the call.
        let bytes = unsafe { std::slice::from_raw_parts(msg.cast::<u8>(), length as usize) };
        String::from_utf8_lossy(bytes).trim_end().to_owned()
    };
    let func = if function.is_null() {
        String::new()
    } else {
        // SAFETY: libmdbx passes a NUL-terminated function name that lives for the call.
        unsafe { CStr::from_ptr(function) }
            .to_string_lossy()
            .into_owned()
    };
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(|| {
        if level <= sys::MDBX_LOG_ERROR {
            tracing::error!(target: "libmdbx", function = %func, line, "{text}");
        } else {
            tracing::warn!(target: "libmdbx", function = %func, line, "{text}");
        }
    });
}
