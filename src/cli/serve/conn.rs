//! Serving connections with hyper: at most `--max-connections` open at once (further ones
//! wait in the listen backlog until one closes), each closed when a request's headers do
//! not arrive within `--header-timeout` of the connection opening or of its previous
//! answer (so idle keep-alive connections close too). At shutdown: stop accepting, close
//! idle connections, let requests under way finish for at most `--shutdown-timeout`, then
//! drop what is left.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

/// The bounds of the connection layer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Connections open at once.
    pub(super) connections: usize,
    /// See the module doc.
    pub(super) header_timeout: Duration,
    /// See the module doc.
    pub(super) shutdown_timeout: Duration,
}

/// Serves `router` on `listener` until `shutdown` resolves, then shuts down as the module
/// doc says. Returns the connections that were still open at the end of the grace period.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> usize {
    let slots = Arc::new(Semaphore::new(limits.connections));
    let (stop, stopping) = watch::channel(false);
    let mut open = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, slot) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = open.join_next(), if !open.is_empty() => continue,
            accepted = accept(&listener, &slots) => accepted,
        };
        let conn = connection(
            stream,
            router.clone(),
            limits.header_timeout,
            stopping.clone(),
        );
        open.spawn(async move {
            conn.await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let drain = async { while open.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.shutdown_timeout, drain)
        .await
        .is_ok()
    {
        return 0;
    }
    let left = open.len();
    open.abort_all();
    left
}

/// The next connection, once a slot is free.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> (TcpStream, OwnedSemaphorePermit) {
    let slot = loop {
        // The semaphore is never closed.
        if let Ok(slot) = Arc::clone(slots).acquire_owned().await {
            break slot;
        }
    };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return (stream, slot),
            Err(e) if connection_error(&e) => {}
            Err(e) => {
                // Out of descriptors (another cause than our connections) or memory: wait
                // rather than spin; the connections already open go on.
                eprintln!("simstore serve: cannot accept a connection: {e}; retrying in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Errors of one incoming connection (not of the listener).
fn connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Serves one connection until it closes, or until `stopping` turns true and the request
/// under way (if any) is answered.
async fn connection(
    stream: TcpStream,
    router: Router,
    header_timeout: Duration,
    mut stopping: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stopping.wait_for(|stop| *stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
