/* SPDX-License-Identifier: MIT
 *
 * vmp_attach.c - HotSpot's attach mechanism, client side (vmp_attach.h).
 */
#include "vmp_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX 65536

static int fail(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* The JVM's ids as the kernel shows them in /proc/PID/status: its uid and gid,
 * and its pid inside its own pid namespace (the socket's name uses that). */
typedef struct jvm_ids {
    uid_t uid;
    gid_t gid;
    long nspid;
} jvm_ids;

static int read_ids(pid_t pid, jvm_ids *ids)
{
    char path[64], line[512];
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    ids->uid = (uid_t)-1;
    ids->gid = (gid_t)-1;
    ids->nspid = pid;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long real, eff;
        if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2)
            ids->uid = (uid_t)eff;
        else if (sscanf(line, "Gid: %lu %lu", &real, &eff) == 2)
            ids->gid = (gid_t)eff;
        else if (strncmp(line, "NSpid:", 6) == 0) {
            char *last = strrchr(line, '\t');
            if (last == NULL)
                last = strrchr(line, ' ');
            if (last != NULL && atol(last + 1) > 0)
                ids->nspid = atol(last + 1);
        }
    }
    fclose(f);
    return ids->uid == (uid_t)-1 ? -1 : 0;
}

int vmp_attach_check(pid_t pid, char *msg, size_t msg_size)
{
    char path[64], line[1024];
    FILE *f;
    int jvm = 0;

    if (pid <= 0)
        return fail(msg, msg_size, "bad process id %ld", (long)pid);
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return fail(msg, msg_size, "no process %ld", (long)pid);
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return fail(msg, msg_size, "process %ld: cannot read %s: %s", (long)pid, path,
                    strerror(errno));
    while (!jvm && fgets(line, sizeof line, f) != NULL)
        jvm = strstr(line, "/libjvm.so") != NULL;
    fclose(f);
    if (!jvm)
        return fail(msg, msg_size, "process %ld is not a HotSpot JVM (no libjvm.so mapped)",
                    (long)pid);
    return 0;
}

/* 1 when process `pid` catches SIGQUIT (SigCgt of its status), 0 when it
 * does not or cannot be read.  A JVM installs its handler early in its
 * start; until then SIGQUIT would kill it. */
static int catches_sigquit(pid_t pid)
{
    char path[64], line[256];
    unsigned long long mask = 0;
    int found = 0;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = sscanf(line, "SigCgt: %llx", &mask) == 1;
    fclose(f);
    return found && (mask >> (SIGQUIT - 1) & 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

#define TRIGGER_FLAGS (O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* Make the JVM start its attach listener: .attach_pid<N> then SIGQUIT, then
 * wait for the socket (HotSpot checks for the file at each SIGQUIT). */
static int start_listener(pid_t pid, const jvm_ids *ids, const char *sock, char *msg,
                          size_t msg_size)
{
    char trigger[128];
    int fd, waited_ms = 0, step_ms = 10;

    /* a JVM that is still starting: wait for its SIGQUIT handler */
    while (!catches_sigquit(pid) && waited_ms < 10000 && kill(pid, 0) == 0) {
        sleep_ms(20);
        waited_ms += 20;
    }
    if (!catches_sigquit(pid))
        return fail(msg, msg_size,
                    "process %ld does not handle SIGQUIT, so it cannot be attached "
                    "(started with -Xrs, or still starting after 10 s)",
                    (long)pid);
    waited_ms = 0;

    /* The file only has to exist (HotSpot checks its owner): never follow
     * a symlink planted there, never truncate or block on what is there. */
    snprintf(trigger, sizeof trigger, "/proc/%ld/cwd/.attach_pid%ld", (long)pid, ids->nspid);
    fd = open(trigger, TRIGGER_FLAGS, 0600);
    if (fd < 0) {
        snprintf(trigger, sizeof trigger, "/proc/%ld/root/tmp/.attach_pid%ld", (long)pid,
                 ids->nspid);
        fd = open(trigger, TRIGGER_FLAGS, 0600);
    }
    if (fd < 0)
        return fail(msg, msg_size, "process %ld: cannot create the attach trigger file %s: %s",
                    (long)pid, trigger,
                    errno == ELOOP ? "a symbolic link is there, which vmp does not follow"
                                   : strerror(errno));
    close(fd);
    if (kill(pid, SIGQUIT) != 0) {
        int e = errno;
        unlink(trigger);
        return fail(msg, msg_size, "process %ld: cannot signal it: %s", (long)pid, strerror(e));
    }
    while (!is_socket(sock) && waited_ms < 10000) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            break;
        sleep_ms(step_ms);
        waited_ms += step_ms;
        if (step_ms < 200)
            step_ms *= 2;
    }
    unlink(trigger);
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return fail(msg, msg_size, "process %ld exited while attaching", (long)pid);
    if (!is_socket(sock))
        return fail(msg, msg_size,
                    "process %ld did not start its attach listener within 10 s "
                    "(started with -XX:+DisableAttachMechanism, or not responding)",
                    (long)pid);
    return 0;
}

/* Send one request, read the whole reply into `reply` (NUL-terminated). */
static int exchange(const char *sock, const char *const args[4], char *reply, size_t reply_size,
                    char *msg, size_t msg_size)
{
    struct sockaddr_un sa;
    char req[8192];
    size_t len = 0, got = 0;
    int fd, i;

    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(sock) >= sizeof sa.sun_path)
        return fail(msg, msg_size, "attach socket path too long: %s", sock);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    req[len++] = '1';
    req[len++] = '\0';
    for (i = 0; i < 4; i++) {
        size_t n = strlen(args[i]) + 1;
        if (len + n > sizeof req)
            return fail(msg, msg_size, "attach request too long");
        memcpy(req + len, args[i], n);
        len += n;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(msg, msg_size, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return fail(msg, msg_size, "cannot connect to %s: %s", sock, strerror(e));
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, req + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            return fail(msg, msg_size, "cannot send the attach request: %s", strerror(e));
        }
        off += (size_t)w;
    }
    while (got + 1 < reply_size) {
        ssize_t r = read(fd, reply + got, reply_size - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    reply[got] = '\0';
    close(fd);
    return 0;
}

/* The first line of `s` without its newline, for messages. */
static const char *first_line(char *s)
{
    char *nl;
    while (*s == '\n')
        s++;
    nl = strchr(s, '\n');
    if (nl != NULL)
        *nl = '\0';
    return s;
}

int vmp_attach_load(pid_t pid, const char *agent, const char *options, int *agent_rc, char *msg,
                    size_t msg_size)
{
    const char *const args[4] = {"load", agent, "true", options ? options : ""};
    char sock[128];
    char *reply, *rest, *rc_text;
    jvm_ids ids;
    uid_t my_euid = geteuid();
    gid_t my_egid = getegid();
    int switched = 0, ret = -1;
    long status;

    if (vmp_attach_check(pid, msg, msg_size) != 0)
        return -1;
    if (read_ids(pid, &ids) != 0)
        return fail(msg, msg_size, "process %ld: cannot read its status", (long)pid);
    if (my_euid == 0 && ids.uid != 0) {
        /* The JVM only talks to its own user; files it reads must be its own. */
        if (setegid(ids.gid) != 0 || seteuid(ids.uid) != 0) {
            if (setegid(my_egid) != 0) { /* undo a half switch; nothing else to do */
            }
            return fail(msg, msg_size, "process %ld: cannot take its user id %lu: %s", (long)pid,
                        (unsigned long)ids.uid, strerror(errno));
        }
        switched = 1;
    } else if (my_euid != 0 && my_euid != ids.uid) {
        return fail(msg, msg_size,
                    "process %ld belongs to another user (uid %lu); run as that user", (long)pid,
                    (unsigned long)ids.uid);
    }
    snprintf(sock, sizeof sock, "/proc/%ld/root/tmp/.java_pid%ld", (long)pid, ids.nspid);
    reply = malloc(REPLY_MAX);
    if (reply == NULL) {
        fail(msg, msg_size, "out of memory");
        goto out;
    }
    if (!is_socket(sock) && start_listener(pid, &ids, sock, msg, msg_size) != 0)
        goto out;
    if (exchange(sock, args, reply, REPLY_MAX, msg, msg_size) != 0)
        goto out;
    errno = 0;
    status = strtol(reply, &rest, 10);
    if (rest == reply) {
        fail(msg, msg_size, "process %ld closed the attach connection without a reply (exited?)",
             (long)pid);
        goto out;
    }
    if (status != 0) {
        fail(msg, msg_size, "process %ld refused to load %s: %s", (long)pid, agent,
             first_line(rest));
        goto out;
    }
    rc_text = strstr(rest, "return code: ");
    if (rc_text == NULL) {
        fail(msg, msg_size, "process %ld: unexpected reply to load: %s", (long)pid,
             first_line(rest));
        goto out;
    }
    *agent_rc = atoi(rc_text + strlen("return code: "));
    ret = 0;
out:
    free(reply);
    if (switched) {
        if (seteuid(my_euid) != 0 || setegid(my_egid) != 0) {
            fail(msg, msg_size, "cannot restore the user id: %s", strerror(errno));
            ret = -1;
        }
    }
    return ret;
}
