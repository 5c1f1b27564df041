//! The accept loop: every TCP connection is counted against the connection limits before
//! anything is read from it, must send its request head within a time limit, and is told to
//! go away when the server stops. Running out of file descriptors makes the loop back off
//! rather than spin.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::guard::{Admission, Guard, Refusal};

/// How long a clean stop waits for connections to close before it gives up on them.
const DRAIN: Duration = Duration::from_secs(5);

/// What a request knows of its connection (an extension of every request).
#[derive(Clone)]
pub struct Peer {
    pub admission: Arc<Admission>,
    /// Held by the connection and its WebSocket session: the stop waits until all are gone.
    pub _alive: tokio::sync::mpsc::Sender<()>,
}

/// Accepts connections until `shutdown`, then stops accepting, asks every connection to close
/// (WebSocket sessions send 1001 through `stopping`) and waits for them, for at most
/// [`DRAIN`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    guard: Arc<Guard>,
    stopping: watch::Sender<bool>,
    send_buffer: Option<usize>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_timeout = guard.limits().header_read_timeout;
    // Each connection holds a clone; when all are dropped, every connection has ended.
    let (open_tx, mut open_rx) = tokio::sync::mpsc::channel::<()>(1);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut backoff = Duration::ZERO;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut shutdown => break,
        };
        let (tcp, addr) = match accepted {
            Ok(accepted) => {
                backoff = Duration::ZERO;
                accepted
            }
            Err(e) if out_of_resources(&e) => {
                guard.accept_failed(&e);
                backoff = (backoff * 2).clamp(Duration::from_millis(10), Duration::from_secs(1));
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => continue,
                    _ = &mut shutdown => break,
                }
            }
            // The peer gave up before we took it (reset, aborted): nothing to do.
            Err(_) => continue,
        };
        let admission = match guard.admit(addr.ip()) {
            Ok(admission) => Arc::new(admission),
            // Closed at once: the peer sees a reset, and the descriptor is free again.
            Err(_) => continue,
        };
        tune(&tcp, send_buffer);
        let peer = Peer {
            admission,
            _alive: open_tx.clone(),
        };
        let router = router.clone();
        let stop = stopping.subscribe();
        tokio::spawn(serve_connection(
            tcp,
            peer,
            router,
            header_timeout,
            stop,
            guard.clone(),
        ));
    }
    drop(listener);
    let _ = stopping.send(true);
    drop(open_tx);
    if tokio::time::timeout(DRAIN, open_rx.recv()).await.is_err() {
        tracing::warn!("connections still open after the drain: dropped");
    }
    Ok(())
}

/// File descriptors or memory ran out: accepting again at once would fail again at once.
fn out_of_resources(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

fn tune(tcp: &TcpStream, send_buffer: Option<usize>) {
    // Moves are small and latency matters more than packing them into fewer segments.
    let _ = tcp.set_nodelay(true);
    if let Some(bytes) = send_buffer {
        let _ = socket2::SockRef::from(tcp).set_send_buffer_size(bytes);
    }
}

async fn serve_connection(
    tcp: TcpStream,
    peer: Peer,
    router: Router,
    header_timeout: Duration,
    mut stop: watch::Receiver<bool>,
    guard: Arc<Guard>,
) {
    let ip = peer.admission.ip();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(peer.clone());
        let mut router = router.clone();
        async move { tower_service::Service::call(&mut router, request.map(Body::new)).await }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let connection = builder
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if result.is_err_and(|e| e.is_timeout()) {
                guard.refused(Refusal::HeaderTimeout, ip);
            }
            return;
        }
        _ = stop.wait_for(|&stopping| stopping) => {}
    }
    // Finish the request in flight, then close; an upgraded socket is its session's to close.
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}
