//! The C ABI of Nameway's transport library: BSD-like sockets (see `include/nameway.h`).
//!
//! A producer socket publishes what it is sent as one object under the name it is bound to and
//! serves it from a thread of its own until it is closed; a consumer socket connected to a
//! name fetches the object on a thread of its own and hands it out in order through `nw_recv`
//! (a bounded queue between them, so a slow reader slows the fetch instead of buffering the
//! object). Errors are returned as -1 or NULL, with one line in `nw_strerror`.
//!
//! This is the only crate of the workspace with `unsafe` code: the pointers C hands in.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

use bytes::Bytes;
use nameway_transport::client::{Client, Transport};
use nameway_transport::producer::serve_registered;
use nameway_transport::{
    fetch, CcKind, CcOptions, FetchOptions, Publication, PublishOptions, SignatureKind, SigningKey,
    VerifyKey,
};
use nameway_wire::Name;

/// `NW_PRODUCER`.
pub const NW_PRODUCER: c_int = 1;
/// `NW_CONSUMER`.
pub const NW_CONSUMER: c_int = 2;

/// `NW_OPT_*` (see include/nameway.h).
mod opt {
    use std::ffi::c_int;
    pub(crate) const TRANSPORT: c_int = 1;
    pub(crate) const SIGN: c_int = 2;
    pub(crate) const KEY: c_int = 3;
    pub(crate) const MANIFEST: c_int = 4;
    pub(crate) const PAYLOAD: c_int = 5;
    pub(crate) const CC: c_int = 6;
    pub(crate) const WINDOW: c_int = 7;
    pub(crate) const HMAC_KEY: c_int = 8;
}

/// Queue depth between the fetch thread and `nw_recv`, in writes (segments, about).
const QUEUE: usize = 256;

enum Msg {
    Chunk(Vec<u8>),
    Done,
    Failed(String),
}

struct Producer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Producer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Consumer {
    rx: mpsc::Receiver<Msg>,
    chunk: Vec<u8>,
    offset: usize,
    finished: bool,
}

/// One socket (opaque to C).
pub struct Socket {
    kind: c_int,
    transport: Option<String>,
    sign: SignatureKind,
    key: Option<PathBuf>,
    hmac_key: Option<PathBuf>,
    manifest: Option<usize>,
    payload: usize,
    cc: CcKind,
    window: Option<f64>,
    bound: Option<Name>,
    name: Option<CString>,
    error: CString,
    producer: Option<Producer>,
    consumer: Option<Consumer>,
}

impl Socket {
    fn new(kind: c_int) -> Self {
        Self {
            kind,
            transport: None,
            sign: SignatureKind::Digest,
            key: None,
            hmac_key: None,
            manifest: None,
            payload: nameway_transport::producer::DEFAULT_PAYLOAD,
            cc: CcKind::Cubic,
            window: None,
            bound: None,
            name: None,
            error: CString::default(),
            producer: None,
            consumer: None,
        }
    }

    fn fail<T>(&mut self, message: impl std::fmt::Display, value: T) -> T {
        self.error = CString::new(message.to_string().replace('\0', " ")).unwrap_or_default();
        value
    }

    fn setopt(&mut self, option: c_int, value: &str) -> Result<(), String> {
        match option {
            opt::TRANSPORT => self.transport = Some(value.to_owned()),
            opt::SIGN => self.sign = value.parse().map_err(|e| format!("{e}"))?,
            opt::KEY => self.key = Some(PathBuf::from(value)),
            opt::HMAC_KEY => self.hmac_key = Some(PathBuf::from(value)),
            opt::MANIFEST => {
                let n: usize = value
                    .parse()
                    .map_err(|_| format!("manifest size {value:?} is not a number"))?;
                self.manifest = (n > 0).then_some(n);
            }
            opt::PAYLOAD => {
                self.payload = value
                    .parse()
                    .map_err(|_| format!("payload size {value:?} is not a number"))?;
            }
            opt::CC => self.cc = value.parse()?,
            opt::WINDOW => self.window = Some(nameway_transport::cc::parse_window(value)?),
            other => return Err(format!("unknown option {other}")),
        }
        Ok(())
    }

    fn transport(&self) -> Result<Transport, String> {
        Transport::resolve(self.transport.as_deref()).map_err(|e| chain(&e))
    }

    fn send(&mut self, bytes: Bytes) -> Result<(), String> {
        if self.kind != NW_PRODUCER {
            return Err("nw_send needs a producer socket".to_owned());
        }
        let prefix = self
            .bound
            .clone()
            .ok_or("nw_send before nw_bind: bind the socket to a name first")?;
        let key = match (&self.key, self.sign) {
            (None, SignatureKind::Digest) => SigningKey::Digest,
            (None, kind) => return Err(format!("signing with {kind} needs NW_OPT_KEY")),
            (Some(path), kind) => SigningKey::load(kind, path).map_err(|e| chain(&e))?,
        };
        let options = PublishOptions {
            payload_size: self.payload,
            manifest: self.manifest,
            ..PublishOptions::default()
        };
        let mut publication =
            Publication::from_bytes(prefix, bytes, key, options).map_err(|e| chain(&e))?;
        let transport = self.transport()?;
        // A new object replaces the one served before.
        self.producer = None;
        let (ready_tx, ready_rx) = mpsc::channel::<Result<String, String>>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("cannot start the runtime: {e}")));
                    return;
                }
            };
            rt.block_on(async move {
                let mut client = match Client::connect(transport).await {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(chain(&e)));
                        return;
                    }
                };
                if let Err(e) = client.register(publication.prefix()).await {
                    let _ = ready_tx.send(Err(chain(&e)));
                    return;
                }
                let _ = ready_tx.send(Ok(publication.name().to_string()));
                tokio::select! {
                    _ = serve_registered(&mut client, &mut publication) => {}
                    _ = stop_rx => {}
                }
            });
        });
        self.producer = Some(Producer {
            stop: Some(stop_tx),
            thread: Some(thread),
        });
        match ready_rx.recv() {
            Ok(Ok(name)) => {
                self.name = CString::new(name).ok();
                Ok(())
            }
            Ok(Err(e)) => {
                self.producer = None;
                Err(e)
            }
            Err(_) => {
                self.producer = None;
                Err("the producer thread ended".to_owned())
            }
        }
    }

    fn connect(&mut self, name: Name) -> Result<(), String> {
        if self.kind != NW_CONSUMER {
            return Err("nw_connect needs a consumer socket".to_owned());
        }
        let verify = match (&self.key, &self.hmac_key) {
            (Some(k), _) => Some(VerifyKey::load(k, false).map_err(|e| chain(&e))?),
            (None, Some(k)) => Some(VerifyKey::load(k, true).map_err(|e| chain(&e))?),
            (None, None) => None,
        };
        let defaults = CcOptions::default();
        let initial_window = self.window.unwrap_or(match self.cc {
            CcKind::Fixed => 64.0,
            _ => defaults.initial_window,
        });
        let options = FetchOptions {
            cc: CcOptions {
                kind: self.cc,
                initial_window,
                max_window: defaults.max_window.max(initial_window),
            },
            verify,
            ..FetchOptions::default()
        };
        let transport = self.transport()?;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = tx.send(Msg::Failed(format!("cannot start the runtime: {e}")));
                    return;
                }
            };
            let end = rt.block_on(async {
                let mut client = Client::connect(transport).await.map_err(|e| chain(&e))?;
                let mut sink = ChannelSink(tx.clone());
                fetch(&mut client, &name, &options, &mut sink, &mut |_| {})
                    .await
                    .map_err(|e| chain(&e))
            });
            let _ = tx.send(match end {
                Ok(_) => Msg::Done,
                Err(e) => Msg::Failed(e),
            });
        });
        self.consumer = Some(Consumer {
            rx,
            chunk: Vec::new(),
            offset: 0,
            finished: false,
        });
        Ok(())
    }

    fn recv(&mut self, out: &mut [u8]) -> Result<usize, String> {
        let c = self
            .consumer
            .as_mut()
            .ok_or("nw_recv before nw_connect: connect the socket to a name first")?;
        loop {
            if c.offset < c.chunk.len() {
                let n = out.len().min(c.chunk.len() - c.offset);
                if let (Some(dst), Some(src)) =
                    (out.get_mut(..n), c.chunk.get(c.offset..c.offset + n))
                {
                    dst.copy_from_slice(src);
                }
                c.offset += n;
                return Ok(n);
            }
            if c.finished {
                return Ok(0);
            }
            match c.rx.recv() {
                Ok(Msg::Chunk(chunk)) => {
                    c.chunk = chunk;
                    c.offset = 0;
                }
                Ok(Msg::Done) => c.finished = true,
                Ok(Msg::Failed(e)) => return Err(e),
                Err(_) => return Err("the fetch thread ended".to_owned()),
            }
        }
    }
}

/// An error with its causes, one line: "what: why: why".
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// The fetch's sink: each write goes to `nw_recv` through the bounded queue.
struct ChannelSink(mpsc::SyncSender<Msg>);

impl Write for ChannelSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(Msg::Chunk(buf.to_vec()))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "socket closed"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// # Safety
/// `s` is NULL or a pointer from `nw_socket_new` not yet closed.
unsafe fn socket<'a>(s: *mut Socket) -> Option<&'a mut Socket> {
    // SAFETY: the caller passes a live socket or NULL.
    unsafe { s.as_mut() }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: checked non-NULL; the caller passes a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Creates a socket of `kind` (`NW_PRODUCER` or `NW_CONSUMER`); NULL for another kind.
#[unsafe(no_mangle)]
pub extern "C" fn nw_socket_new(kind: c_int) -> *mut Socket {
    if kind != NW_PRODUCER && kind != NW_CONSUMER {
        return std::ptr::null_mut();
    }
    Box::into_raw(Box::new(Socket::new(kind)))
}

/// Sets an option (`NW_OPT_*`) to `value`.
///
/// # Safety
/// `s` from `nw_socket_new`; `value` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_setopt(s: *mut Socket, option: c_int, value: *const c_char) -> c_int {
    // SAFETY: as documented.
    let (Some(s), Some(value)) = (unsafe { socket(s) }, unsafe { string(value) }) else {
        return -1;
    };
    match s.setopt(option, &value) {
        Ok(()) => 0,
        Err(e) => s.fail(e, -1),
    }
}

fn parse_name(s: &mut Socket, name: Option<String>) -> Option<Name> {
    let Some(name) = name else {
        return s.fail("no name given", None);
    };
    match name.parse::<Name>() {
        Ok(n) => Some(n),
        Err(e) => s.fail(format!("{name:?} is not an NDN name ({e})"), None),
    }
}

/// Binds a producer socket to the name its objects are published under.
///
/// # Safety
/// `s` from `nw_socket_new`; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_bind(s: *mut Socket, name: *const c_char) -> c_int {
    // SAFETY: as documented.
    let Some(s) = (unsafe { socket(s) }) else {
        return -1;
    };
    // SAFETY: as documented.
    let Some(name) = parse_name(s, unsafe { string(name) }) else {
        return -1;
    };
    if s.kind != NW_PRODUCER {
        return s.fail("nw_bind needs a producer socket", -1);
    }
    s.bound = Some(name);
    0
}

/// Connects a consumer socket to a named object: the fetch starts.
///
/// # Safety
/// `s` from `nw_socket_new`; `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_connect(s: *mut Socket, name: *const c_char) -> c_int {
    // SAFETY: as documented.
    let Some(s) = (unsafe { socket(s) }) else {
        return -1;
    };
    // SAFETY: as documented.
    let Some(name) = parse_name(s, unsafe { string(name) }) else {
        return -1;
    };
    match s.connect(name) {
        Ok(()) => 0,
        Err(e) => s.fail(e, -1),
    }
}

/// Publishes `len` bytes at `buf` as a new version of the bound name and serves it (until the
/// next `nw_send` or `nw_close`). Returns `len` once the prefix is registered.
///
/// # Safety
/// `s` from `nw_socket_new`; `buf` valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_send(s: *mut Socket, buf: *const c_void, len: usize) -> isize {
    // SAFETY: as documented.
    let Some(s) = (unsafe { socket(s) }) else {
        return -1;
    };
    let bytes = if len == 0 {
        Bytes::new()
    } else if buf.is_null() {
        return s.fail("NULL buffer", -1);
    } else {
        // SAFETY: the caller passes `len` readable bytes at `buf`.
        Bytes::copy_from_slice(unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) })
    };
    match s.send(bytes) {
        Ok(()) => isize::try_from(len).unwrap_or(isize::MAX),
        Err(e) => s.fail(e, -1),
    }
}

/// Reads up to `len` bytes of the object into `buf`: the count, 0 once the whole object has
/// been read (and verified), or -1 on failure.
///
/// # Safety
/// `s` from `nw_socket_new`; `buf` valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_recv(s: *mut Socket, buf: *mut c_void, len: usize) -> isize {
    // SAFETY: as documented.
    let Some(s) = (unsafe { socket(s) }) else {
        return -1;
    };
    if buf.is_null() && len > 0 {
        return s.fail("NULL buffer", -1);
    }
    let out: &mut [u8] = if len == 0 {
        &mut []
    } else {
        // SAFETY: the caller passes `len` writable bytes at `buf`.
        unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) }
    };
    match s.recv(out) {
        Ok(n) => isize::try_from(n).unwrap_or(isize::MAX),
        Err(e) => s.fail(e, -1),
    }
}

/// The versioned name of the object last published (producer), or NULL.
///
/// # Safety
/// `s` from `nw_socket_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_name(s: *mut Socket) -> *const c_char {
    // SAFETY: as documented.
    match unsafe { socket(s) }.and_then(|s| s.name.as_ref()) {
        Some(n) => n.as_ptr(),
        None => std::ptr::null(),
    }
}

/// The last error on this socket, one line ("" if none).
///
/// # Safety
/// `s` from `nw_socket_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_strerror(s: *mut Socket) -> *const c_char {
    // SAFETY: as documented.
    match unsafe { socket(s) } {
        Some(s) => s.error.as_ptr(),
        None => c"NULL socket".as_ptr(),
    }
}

/// Stops serving (producer) or abandons the fetch (consumer) and frees the socket.
///
/// # Safety
/// `s` from `nw_socket_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nw_close(s: *mut Socket) -> c_int {
    if s.is_null() {
        return -1;
    }
    // SAFETY: `s` came from Box::into_raw in nw_socket_new and is not used again.
    drop(unsafe { Box::from_raw(s) });
    0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn strerror(s: *mut Socket) -> String {
        // SAFETY: a live socket; nw_strerror returns its NUL-terminated message.
        unsafe { CStr::from_ptr(nw_strerror(s)) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn bad_option_values_fail_with_a_message_naming_them() {
        let s = nw_socket_new(NW_CONSUMER);
        assert!(!s.is_null());
        for (option, value, says) in [
            (opt::WINDOW, c"nan", "1 or more"),
            (opt::WINDOW, c"0", "1 or more"),
            (opt::CC, c"reno", "reno"),
            (opt::MANIFEST, c"many", "not a number"),
            (99, c"x", "unknown option 99"),
        ] {
            // SAFETY: a live socket and a NUL-terminated value.
            assert_eq!(unsafe { nw_setopt(s, option, value.as_ptr()) }, -1);
            let message = strerror(s);
            assert!(message.contains(says), "{value:?}: {message}");
        }
        for (option, value) in [
            (opt::WINDOW, c"64"),
            (opt::WINDOW, c"inf"),
            (opt::CC, c"aimd"),
        ] {
            // SAFETY: as above.
            assert_eq!(
                unsafe { nw_setopt(s, option, value.as_ptr()) },
                0,
                "{value:?}"
            );
        }
        // SAFETY: NULL socket and NULL value are refused, not dereferenced.
        assert_eq!(
            unsafe { nw_setopt(std::ptr::null_mut(), opt::CC, c"aimd".as_ptr()) },
            -1
        );
        // SAFETY: as above.
        assert_eq!(unsafe { nw_setopt(s, opt::CC, std::ptr::null()) }, -1);
        // SAFETY: `s` came from nw_socket_new and is not used again.
        assert_eq!(unsafe { nw_close(s) }, 0);
    }
}
