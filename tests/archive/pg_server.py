# SPDX-License-Identifier: MIT
#
# pg_server.py - a private PostgreSQL server for the tests of `vmp archive`:
# initdb and pg_ctl from Debian's postgresql package, in a temporary
# directory, listening on a Unix socket there and on no TCP port, with a
# password (scram-sha-256) for its one user.  As root it runs as the user
# nobody (PostgreSQL refuses to run as root).  Nothing outside the directory
# is touched; stop() removes it.
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

USER = "vmp"
PASSWORD = "s3cret-vmp"


def bindir():
    """The newest server's bin directory, or None."""
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                  key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(dirs[-1]) if dirs else None


class Server:
    def __init__(self):
        self.bin = bindir()
        if not self.bin:
            raise RuntimeError("no PostgreSQL server (initdb) under /usr/lib/postgresql: "
                               "scripts/setup installs postgresql-15")
        self.dir = tempfile.mkdtemp(prefix="vmp-pg-")
        self.data = os.path.join(self.dir, "data")
        self.as_user = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
            self.as_user = ["runuser", "-u", "nobody", "--"]
        os.chmod(self.dir, 0o755)
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write(PASSWORD + "\n")
        if self.as_user:
            os.chown(pw, nobody.pw_uid, nobody.pw_gid)
        self._run("initdb", "-D", self.data, "-U", USER, "--pwfile", pw, "-E", "UTF8",
                  "--locale", "C", "--auth-local", "scram-sha-256", "--auth-host",
                  "scram-sha-256", "--no-sync")
        os.remove(pw)
        self.start()

    def _run(self, prog, *args, check=True):
        return subprocess.run(self.as_user + [os.path.join(self.bin, prog), *args], cwd=self.dir,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=check)

    def start(self):
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o",
                  "-k %s -c listen_addresses='' -c max_connections=40" % self.dir, "start")

    def stop(self, mode="fast"):
        return self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def uri(self, db="vmp", password=PASSWORD):
        return "postgresql://%s:%s@/%s?host=%s" % (USER, password, db, self.dir)

    def env(self, db="vmp"):
        """PG* variables naming the server, as libpq reads them."""
        e = dict(os.environ)
        e.update(PGHOST=self.dir, PGUSER=USER, PGPASSWORD=PASSWORD, PGDATABASE=db)
        return e

    def psql(self, sql, db="vmp", check=True):
        """Rows of `sql` (psql -At), as lists of strings."""
        p = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c",
                            sql], env=self.env(db), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=False)
        if check and p.returncode != 0:
            raise RuntimeError("psql: %s" % p.stderr.decode().strip())
        return [l.split("\t") for l in p.stdout.decode().splitlines()]

    def createdb(self, name):
        self.psql("CREATE DATABASE %s" % name, db="postgres")

    def schema_dump(self, db):
        """The schema of `db` as pg_dump prints it, without comments and SETs."""
        p = subprocess.run(["pg_dump", "--schema-only", "--no-owner", "--no-privileges"],
                           env=self.env(db), stdout=subprocess.PIPE, check=True)
        keep = [l for l in p.stdout.decode().splitlines()
                if l.strip() and not l.startswith("--") and not l.startswith("SET ") and
                "set_config" not in l and not l.startswith("\\")]
        return "\n".join(keep)

    def close(self):
        self.stop("immediate")
        for _ in range(50):
            try:
                shutil.rmtree(self.dir)
                return
            except OSError:
                time.sleep(0.1)
