//! Who waits on which job, and the connection that hears the database say a job changed.
//!
//! A trigger (migration 0001) sends `NOTIFY g16_jobs, '<job id>'` on every change of a job's
//! state, holder or attempt. One connection per store LISTENs and wakes that job's watchers.
//! While that connection is down (the database restarting), watchers poll instead; each time it
//! goes down or comes back every watcher is woken, so none sleeps through a notification that
//! was never heard.

use std::collections::HashMap;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{oneshot, Notify};
use tokio_postgres::{AsyncMessage, NoTls};

use crate::JobId;

/// The channel the trigger notifies.
const CHANNEL: &str = "g16_jobs";

/// The first wait before connecting again, doubled up to `MAX_BACKOFF` while it keeps failing.
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

#[derive(Default)]
pub(super) struct Watchers {
    /// Each watched job's `Notify`, with how many watchers hold it.
    waiting: Mutex<HashMap<JobId, (Arc<Notify>, usize)>>,
    listening: AtomicBool,
}

/// One watcher's interest in a job; forgotten on drop.
pub(super) struct Watch {
    watchers: Arc<Watchers>,
    job: JobId,
    pub notify: Arc<Notify>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut waiting = self.watchers.lock();
        if let Some((_, count)) = waiting.get_mut(&self.job) {
            *count -= 1;
            if *count == 0 {
                waiting.remove(&self.job);
            }
        }
    }
}

impl Watchers {
    fn lock(&self) -> MutexGuard<'_, HashMap<JobId, (Arc<Notify>, usize)>> {
        // The map stays consistent through a panic elsewhere: each update is one map operation.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn watch(self: &Arc<Self>, job: JobId) -> Watch {
        let mut waiting = self.lock();
        let (notify, count) = waiting.entry(job).or_insert_with(|| (Arc::new(Notify::new()), 0));
        *count += 1;
        Watch { watchers: Arc::clone(self), job, notify: Arc::clone(notify) }
    }

    /// Whether notifications are heard now; when not, watchers poll.
    pub fn listening(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    fn wake(&self, job: JobId) {
        if let Some((notify, _)) = self.lock().get(&job) {
            notify.notify_waiters();
        }
    }

    fn wake_all(&self) {
        for (notify, _) in self.lock().values() {
            notify.notify_waiters();
        }
    }

    /// On each change, every watcher is woken: one that waits on notifications may have missed
    /// some, one that polls may stop.
    fn set_listening(&self, listening: bool) {
        if self.listening.swap(listening, Ordering::AcqRel) != listening {
            self.wake_all();
        }
    }
}

/// Starts the listening connection; it runs until the returned sender is dropped.
pub(super) fn start(mut config: tokio_postgres::Config, watchers: Arc<Watchers>) -> oneshot::Sender<()> {
    // A connection that only listens sends nothing, so only keepalives notice a dead peer.
    config.keepalives(true).keepalives_idle(Duration::from_secs(30));
    let (stop, mut stopped) = oneshot::channel();
    tokio::spawn(async move {
        let mut backoff = MIN_BACKOFF;
        loop {
            let heard = tokio::select! {
                _ = &mut stopped => return,
                heard = listen(&config, &watchers) => heard,
            };
            watchers.set_listening(false);
            backoff = if heard { MIN_BACKOFF } else { (backoff * 2).min(MAX_BACKOFF) };
            tokio::select! {
                _ = &mut stopped => return,
                _ = tokio::time::sleep(backoff) => {}
            }
        }
    });
    stop
}

/// Connects, listens and dispatches notifications until the connection ends; returns whether
/// it got as far as listening.
async fn listen(config: &tokio_postgres::Config, watchers: &Watchers) -> bool {
    let Ok((client, mut connection)) = config.connect(NoTls).await else { return false };
    // The connection does its IO only while polled, here, which is also where notifications
    // arrive; `client` sends the LISTEN through it.
    let messages = async {
        loop {
            match poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(note))) => {
                    if let Ok(job) = note.payload().parse::<JobId>() {
                        watchers.wake(job);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    };
    tokio::pin!(messages);
    let statement = format!("LISTEN {CHANNEL}");
    tokio::select! {
        listened = client.batch_execute(&statement) => {
            if listened.is_err() {
                return false;
            }
        }
        _ = &mut messages => return false,
    }
    watchers.set_listening(true);
    messages.await;
    true
}
