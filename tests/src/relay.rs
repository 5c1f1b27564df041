//! A TCP relay standing for the network between clients and the server: it can cut every
//! connection (a network failure), refuse new ones for a while (the network still down), and
//! lead to another server address, while the clients keep one address.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

/// A relay on a free local port to `upstream`.
pub struct Relay {
    pub addr: String,
    upstream: Arc<Mutex<String>>,
    blocked: Arc<AtomicBool>,
    live: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    pub fn start(upstream: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let addr = listener.local_addr().expect("relay address").to_string();
        let relay = Relay {
            addr,
            upstream: Arc::new(Mutex::new(upstream.to_string())),
            blocked: Arc::new(AtomicBool::new(false)),
            live: Arc::new(Mutex::new(Vec::new())),
        };
        let (upstream, blocked, live) = (
            relay.upstream.clone(),
            relay.blocked.clone(),
            relay.live.clone(),
        );
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if blocked.load(Ordering::SeqCst) {
                    continue; // dropped: closed at once
                }
                let target = upstream
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let (Ok(client2), Ok(server2), Ok(client3), Ok(server3)) = (
                    client.try_clone(),
                    server.try_clone(),
                    client.try_clone(),
                    server.try_clone(),
                ) else {
                    continue;
                };
                live.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend([client3, server3]);
                pipe(client, server);
                pipe(server2, client2);
            }
        });
        relay
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Breaks every open connection, as a network failure does.
    pub fn cut(&self) {
        let live: Vec<TcpStream> = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        for stream in live {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// While blocked, new connections are closed at once.
    pub fn block(&self, blocked: bool) {
        self.blocked.store(blocked, Ordering::SeqCst);
    }

    pub fn lead_to(&self, upstream: &str) {
        *self.upstream.lock().unwrap_or_else(PoisonError::into_inner) = upstream.to_string();
    }
}

/// Copies one direction of a relayed connection; the end of either side ends both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    });
}
