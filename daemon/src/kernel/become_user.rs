//! Becoming another user in a child between fork and exec (the sessions' own user on the box,
//! ADR 0013): for a `pre_exec` closure, async-signal-safe.

/// Take only group `gid`, then group `gid`, then user `uid` (each step needs the privilege the
/// next one gives up), and a 027 umask, so what the child writes stays that user's and its
/// group's alone. To be called in a `pre_exec` closure only.
pub fn become_user(uid: u32, gid: u32) -> std::io::Result<()> {
    let groups = [gid as libc::gid_t];
    // SAFETY: plain system calls on values owned here; async-signal-safe.
    unsafe {
        if libc::setgroups(1, groups.as_ptr()) < 0
            || libc::setgid(gid as libc::gid_t) < 0
            || libc::setuid(uid as libc::uid_t) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
        libc::umask(0o027);
    }
    Ok(())
}
