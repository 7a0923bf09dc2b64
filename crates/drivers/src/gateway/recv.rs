//! Receiving a batch of datagrams with `recvmmsg`, each with its source address and the
//! kernel's receive timestamp (`SO_TIMESTAMPNS`) moved to the process clock.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use super::{MAX_DATAGRAM, RECV_BATCH};

pub(super) fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One datagram as `recvmmsg` returned it.
pub(super) struct Received {
    pub peer: SocketAddr,
    /// Arrival on the process clock.
    pub arrival_ns: u64,
    pub kernel_timestamp: bool,
}

/// Buffers for one `recvmmsg` call: [`RECV_BATCH`] datagram buffers with their source
/// addresses and `SCM_TIMESTAMPNS` control messages. Boxed slices, so the pointers the
/// headers hold, set once in [`RecvBatch::new`], stay valid however the struct moves.
pub(super) struct RecvBatch {
    bufs: Box<[u8]>,
    addrs: Box<[libc::sockaddr_storage]>,
    /// Room for one cmsg with a timespec per datagram, 8-byte aligned.
    controls: Box<[[u64; 8]]>,
    iovs: Box<[libc::iovec]>,
    headers: Box<[libc::mmsghdr]>,
}

impl RecvBatch {
    pub(super) fn new() -> Self {
        // SAFETY (the three `zeroed`): all-zero bytes are valid sockaddr_storage, iovec
        // and mmsghdr values (null pointers, zero lengths); `recv` points them at the
        // buffers before every call.
        let addr = || unsafe { std::mem::zeroed::<libc::sockaddr_storage>() };
        let iov = || unsafe { std::mem::zeroed::<libc::iovec>() };
        let header = || unsafe { std::mem::zeroed::<libc::mmsghdr>() };
        let mut batch = RecvBatch {
            bufs: vec![0u8; RECV_BATCH * MAX_DATAGRAM].into_boxed_slice(),
            addrs: (0..RECV_BATCH).map(|_| addr()).collect(),
            controls: vec![[0u64; 8]; RECV_BATCH].into_boxed_slice(),
            iovs: (0..RECV_BATCH).map(|_| iov()).collect(),
            headers: (0..RECV_BATCH).map(|_| header()).collect(),
        };
        for i in 0..RECV_BATCH {
            batch.iovs[i] = libc::iovec {
                iov_base: batch.bufs[i * MAX_DATAGRAM..].as_mut_ptr().cast(),
                iov_len: MAX_DATAGRAM,
            };
            let h = &mut batch.headers[i].msg_hdr;
            h.msg_name = (&mut batch.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_iov = &mut batch.iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = batch.controls[i].as_mut_ptr().cast();
        }
        batch
    }

    /// Up to [`RECV_BATCH`] datagrams: blocks (or, on a non-blocking socket, returns 0)
    /// until one is there, then takes whatever else is queued (`MSG_WAITFORONE`).
    pub(super) fn recv(&mut self, socket: &UdpSocket) -> std::io::Result<usize> {
        // The kernel writes back the lengths; the pointers were set once in `new`.
        for header in self.headers.iter_mut() {
            let h = &mut header.msg_hdr;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_controllen = std::mem::size_of::<[u64; 8]>() as _;
            h.msg_flags = 0;
            header.msg_len = 0;
        }
        // SAFETY: every header points at buffers owned by `self` that outlive the call,
        // with their true sizes; the kernel writes at most RECV_BATCH headers.
        let n = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.headers.as_mut_ptr(),
                RECV_BATCH as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.kind() {
                std::io::ErrorKind::WouldBlock
                | std::io::ErrorKind::TimedOut
                | std::io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        Ok(n as usize)
    }

    /// The i-th datagram of the last `recv`.
    pub(super) fn datagram(&self, i: usize) -> &[u8] {
        let len = (self.headers[i].msg_len as usize).min(MAX_DATAGRAM);
        &self.bufs[i * MAX_DATAGRAM..i * MAX_DATAGRAM + len]
    }

    /// What the kernel said about the i-th datagram; `mono` and `real` are the process
    /// clock and CLOCK_REALTIME read back to back after the call returned. `None` for a
    /// source address that is not IPv4 or IPv6.
    pub(super) fn received(&self, i: usize, mono: u64, real: u64) -> Option<Received> {
        let peer = sockaddr_to_std(&self.addrs[i])?;
        let header = &self.headers[i].msg_hdr;
        let mut kernel_real = None;
        // SAFETY: the CMSG macros walk the control buffer the kernel filled, bounded by
        // the msg_controllen it wrote back; the timespec is read unaligned.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(header);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET
                    && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
                {
                    let ts: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                    kernel_real = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                cmsg = libc::CMSG_NXTHDR(header, cmsg);
            }
        }
        // The kernel stamped the datagram `real - kernel` ns before we read the clocks;
        // the same interval before `mono` is its arrival on the monotonic base. A
        // wall-clock step between the readings could make that negative or huge: then
        // fall back to the time the call returned.
        let (arrival_ns, kernel_timestamp) = match kernel_real {
            Some(k) if k <= real && real - k < 60_000_000_000 => {
                (mono.saturating_sub(real - k), true)
            }
            _ => (mono, false),
        };
        Some(Received {
            peer,
            arrival_ns,
            kernel_timestamp,
        })
    }
}

fn sockaddr_to_std(addr: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match addr.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let a =
                unsafe { &*(addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::from((ip, u16::from_be(a.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let a =
                unsafe { &*(addr as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(a.sin6_port))))
        }
        _ => None,
    }
}
