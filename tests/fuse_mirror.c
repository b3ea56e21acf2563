/* fuse_mirror: a tiny read-only FUSE file system for the tests. It mirrors
   the regular files of one directory (no subdirectories) through
   /dev/fuse, speaking the kernel's protocol itself (no libfuse), so that
   tests/test_faults.sh can put a source on a file system statfs calls FUSE
   and check that gpufeed reads it with pread by default, and that a file
   cut short under a running loader there ends in an error, not SIGBUS.

     cc -std=c99 tests/fuse_mirror.c -o fuse_mirror
     fuse_mirror SRC_DIR MOUNTPOINT      (needs root: mount(2); runs until
                                          SIGTERM or SIGINT, then unmounts)

   Exit status 0 after an unmount, 2 when it cannot mount (the caller skips). */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/fuse.h>

#define MAXN 256
static const char *g_src;
static char *g_names[MAXN];            /* node id = index + 2 (1 is the root) */
static int g_nnames;
static volatile sig_atomic_t g_stop;

static void on_signal(int sig) { (void)sig; g_stop = 1; }

static void reply(int fd, uint64_t unique, int error, const void *p, size_t n)
{
    struct fuse_out_header h;
    struct iovec v[2];
    h.len = (uint32_t)(sizeof h + (error ? 0 : n));
    h.error = error;
    h.unique = unique;
    v[0].iov_base = &h; v[0].iov_len = sizeof h;
    v[1].iov_base = (void *)(uintptr_t)p; v[1].iov_len = error ? 0 : n;
    if (writev(fd, v, error || !n ? 1 : 2) < 0 && errno != ENOENT) perror("fuse_mirror: writev");
}

static void attr_of(const struct stat *st, uint64_t ino, struct fuse_attr *a)
{
    memset(a, 0, sizeof *a);
    a->ino = ino;
    a->size = (uint64_t)st->st_size;
    a->blocks = (uint64_t)st->st_blocks;
    a->atime = (uint64_t)st->st_atime; a->mtime = (uint64_t)st->st_mtime; a->ctime = (uint64_t)st->st_ctime;
    a->atimensec = (uint32_t)st->st_atim.tv_nsec; a->mtimensec = (uint32_t)st->st_mtim.tv_nsec; a->ctimensec = (uint32_t)st->st_ctim.tv_nsec;
    a->mode = st->st_mode;
    a->nlink = (uint32_t)st->st_nlink;
    a->blksize = 4096;
}

/* stat of node id: the source directory for the root, else its file */
static int stat_node(uint64_t node, struct stat *st)
{
    char p[4096];
    if (node == FUSE_ROOT_ID) return stat(g_src, st);
    if (node < 2 || node - 2 >= (uint64_t)g_nnames) return -1;
    snprintf(p, sizeof p, "%s/%s", g_src, g_names[node - 2]);
    return stat(p, st);
}

static void handle(int fd, const uint8_t *req)
{
    const struct fuse_in_header *in = (const struct fuse_in_header *)(const void *)req;
    const void *arg = req + sizeof *in;
    struct stat st;
    char p[4096];
    switch (in->opcode) {
    case FUSE_INIT: {
        const struct fuse_init_in *ii = (const struct fuse_init_in *)arg;
        struct fuse_init_out o;
        memset(&o, 0, sizeof o);
        o.major = FUSE_KERNEL_VERSION;
        o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
        o.max_readahead = ii->max_readahead;
        o.max_write = 65536;
        o.time_gran = 1;
        reply(fd, in->unique, 0, &o, sizeof o);
        break;
    }
    case FUSE_LOOKUP: {
        const char *name = (const char *)arg;
        struct fuse_entry_out o;
        int i;
        snprintf(p, sizeof p, "%s/%s", g_src, name);
        if (in->nodeid != FUSE_ROOT_ID || strchr(name, '/') || stat(p, &st) != 0 || !S_ISREG(st.st_mode)) { reply(fd, in->unique, -ENOENT, NULL, 0); break; }
        for (i = 0; i < g_nnames && strcmp(g_names[i], name) != 0; i++) {}
        if (i == g_nnames) {
            if (g_nnames == MAXN) { reply(fd, in->unique, -ENOSPC, NULL, 0); break; }
            g_names[g_nnames++] = strdup(name);
        }
        memset(&o, 0, sizeof o);
        o.nodeid = (uint64_t)i + 2;
        attr_of(&st, o.nodeid, &o.attr); /* entry and attributes valid 0 s: asked again each time */
        reply(fd, in->unique, 0, &o, sizeof o);
        break;
    }
    case FUSE_GETATTR: {
        struct fuse_attr_out o;
        if (stat_node(in->nodeid, &st) != 0) { reply(fd, in->unique, -ENOENT, NULL, 0); break; }
        memset(&o, 0, sizeof o);
        attr_of(&st, in->nodeid, &o.attr);
        reply(fd, in->unique, 0, &o, sizeof o);
        break;
    }
    case FUSE_OPEN: {
        struct fuse_open_out o;
        int f;
        if (in->nodeid < 2 || in->nodeid - 2 >= (uint64_t)g_nnames) { reply(fd, in->unique, -ENOENT, NULL, 0); break; }
        snprintf(p, sizeof p, "%s/%s", g_src, g_names[in->nodeid - 2]);
        f = open(p, O_RDONLY);
        if (f < 0) { reply(fd, in->unique, -errno, NULL, 0); break; }
        memset(&o, 0, sizeof o);
        o.fh = (uint64_t)f;
        reply(fd, in->unique, 0, &o, sizeof o);
        break;
    }
    case FUSE_READ: {
        const struct fuse_read_in *ri = (const struct fuse_read_in *)arg;
        uint8_t *buf = (uint8_t *)malloc(ri->size ? ri->size : 1);
        ssize_t n = buf ? pread((int)ri->fh, buf, ri->size, (off_t)ri->offset) : -1;
        if (n < 0) reply(fd, in->unique, buf ? -errno : -ENOMEM, NULL, 0);
        else reply(fd, in->unique, 0, buf, (size_t)n); /* short at the end of the file (also one cut short since) */
        free(buf);
        break;
    }
    case FUSE_RELEASE: {
        const struct fuse_release_in *ri = (const struct fuse_release_in *)arg;
        close((int)ri->fh);
        reply(fd, in->unique, 0, NULL, 0);
        break;
    }
    case FUSE_FLUSH: reply(fd, in->unique, 0, NULL, 0); break;
    case FUSE_STATFS: {
        struct fuse_statfs_out o;
        memset(&o, 0, sizeof o);
        o.st.bsize = 4096; o.st.frsize = 4096; o.st.namelen = 255;
        reply(fd, in->unique, 0, &o, sizeof o);
        break;
    }
    case FUSE_FORGET: case FUSE_BATCH_FORGET: case FUSE_INTERRUPT: break; /* no reply */
    case FUSE_DESTROY: reply(fd, in->unique, 0, NULL, 0); g_stop = 1; break;
    default: reply(fd, in->unique, -ENOSYS, NULL, 0); break;
    }
}

int main(int argc, char **argv)
{
    char opts[256];
    struct sigaction sa;
    size_t cap = (size_t)1 << 20;
    uint8_t *req;
    int fd;
    if (argc != 3) { fprintf(stderr, "usage: fuse_mirror SRC_DIR MOUNTPOINT\n"); return 2; }
    g_src = argv[1];
    fd = open("/dev/fuse", O_RDWR);
    if (fd < 0) { perror("fuse_mirror: /dev/fuse"); return 2; }
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40755,user_id=0,group_id=0,allow_other", fd);
    if (mount("fuse_mirror", argv[2], "fuse.fuse_mirror", MS_NOSUID | MS_NODEV | MS_RDONLY, opts) != 0) { perror("fuse_mirror: mount"); return 2; }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the read below returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    req = (uint8_t *)malloc(cap);
    while (req && !g_stop) {
        ssize_t n = read(fd, req, cap);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ENOENT) continue;
            if (errno == ENODEV) break; /* unmounted */
            perror("fuse_mirror: read");
            break;
        }
        if ((size_t)n >= sizeof(struct fuse_in_header)) handle(fd, req);
    }
    if (umount2(argv[2], MNT_DETACH) != 0 && errno != EINVAL) perror("fuse_mirror: umount");
    free(req);
    return 0;
}
