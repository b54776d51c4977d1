import Foundation

/// Another local user (`nobody`) trying to stand in for the coordinator: a process of that
/// uid that binds an endpoint before (or after) fsm-launch does and answers what reaches it.
///
/// It is plain Python speaking ZMTP 3.0 over a Unix socket, no pyzmq (which this user may not
/// be able to import), run with `setpriv` as uid 65534: so it needs root, as
/// ``AnotherUser/isAvailable`` says. It prints one line per thing that happened: `bound …` or
/// `cannot bind: …`, `connection`, `received [frames]`, `refused …`.
///
/// Roles:
/// - `router`: binds the endpoint (creating the missing directories on the way, world-writable,
///   as an attacker would, and removing what is there when it may) and answers every request
///   with a forged `state` reply for "Mallory".
/// - `pub`: binds the endpoint likewise and publishes a forged `state:auth` change every 100 ms
///   to every subscriber.
/// - `dealer`: connects to the endpoint and sends `get counter/a`; prints `answered` or `refused`.
enum Squatter {
    /// What a forged reply or publication carries, to look for on the victim's side.
    static let forgedName = "Mallory"

    static let script = #"""
    import json, os, socket, struct, sys, threading, time

    def log(*parts):
        print(*parts, flush=True)

    role, endpoint = sys.argv[1], sys.argv[2]
    address = endpoint[len("ipc://"):]
    path = "\0" + address[1:] if address.startswith("@") else address

    def exact(c, n):
        data = b""
        while len(data) < n:
            chunk = c.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def send_frame(c, body, more=False, command=False):
        flags = (1 if more else 0) | (4 if command else 0)
        if len(body) > 255:
            c.sendall(bytes([flags | 2]) + struct.pack(">Q", len(body)) + body)
        else:
            c.sendall(bytes([flags, len(body)]) + body)

    def recv_frame(c):
        flags = exact(c, 1)[0]
        size = struct.unpack(">Q", exact(c, 8))[0] if flags & 2 else exact(c, 1)[0]
        return flags, exact(c, size)

    def handshake(c, kind):
        c.sendall(b"\xff" + b"\0" * 8 + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\0") + b"\0" * 32)
        exact(c, 64)
        name = b"Socket-Type"
        send_frame(c, b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(kind)) + kind, command=True)
        flags, body = recv_frame(c)
        if not flags & 4 or not body[1:6] == b"READY":
            raise EOFError("refused: " + body.decode("utf-8", "replace"))

    def message(c):
        frames = []
        while True:
            flags, body = recv_frame(c)
            if flags & 4:
                continue
            frames.append(body)
            if not flags & 1:
                return frames

    def serve(c):
        try:
            if role == "router":
                handshake(c, b"ROUTER")
                while True:
                    frames = message(c)
                    log("received", json.dumps([f.decode("utf-8", "replace") for f in frames]))
                    if len(frames) == 3 and len(frames[0]) == 12:
                        payload = json.dumps({"step": {"authenticated": {"_0": {"name": "Mallory"}}}}).encode()
                        header = bytes([0x47, 1, 0x10, 0]) + frames[0][4:12]
                        for i, f in enumerate([header, frames[1], payload]):
                            send_frame(c, f, more=i < 2)
            else:
                handshake(c, b"PUB")
                number = 0
                while True:
                    number += 1
                    header = bytes([0x47, 1, 0x40, 0]) + struct.pack(">Q", number)
                    payload = json.dumps({"address": "auth", "worker": "main", "state": {"user": "Mallory"}}).encode()
                    for i, f in enumerate([b"state:auth", header, b"auth", payload]):
                        send_frame(c, f, more=i < 3)
                    time.sleep(0.1)
        except (EOFError, OSError) as error:
            log("connection ended", error)

    if role == "dealer":
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(path)
            c.settimeout(3)
            handshake(c, b"DEALER")
            request = bytes([0x47, 1, 0x02, 0]) + struct.pack(">Q", 1)
            for i, f in enumerate([request, b"counter/a", b""]):
                send_frame(c, f, more=i < 2)
            log("answered", json.dumps([f.decode("utf-8", "replace") for f in message(c)]))
        except (EOFError, OSError) as error:
            log("refused", error)
        sys.exit(0)

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if not path.startswith("\0"):
            directory = os.path.dirname(path)
            if not os.path.isdir(directory):
                os.umask(0)
                os.makedirs(directory, 0o777)
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        server.bind(path)
        if not path.startswith("\0"):
            os.chmod(path, 0o777)
        server.listen(16)
    except OSError as error:
        log("cannot bind:", error)
        sys.exit(3)
    log("bound", endpoint)
    while True:
        c, _ = server.accept()
        log("connection")
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// Starts the squatter as `nobody` in `role` on `endpoint`, its script and output in
    /// `directory` (which must let `nobody` read it), and waits until it bound or failed to.
    static func start(_ role: String, _ endpoint: String, in directory: URL) async throws -> ChildProcess {
        let file = directory.appendingPathComponent("squatter.py")
        if !FileManager.default.fileExists(atPath: file.path) {
            try Data(script.utf8).write(to: file)
            chmod(file.path, 0o644)
        }
        let process = try await ChildProcess(AnotherUser.setpriv, AnotherUser.arguments + [AnotherUser.python, file.path, role, endpoint],
                                             outputIn: directory, label: "squatter-\(role)")
        guard role != "dealer" else { return process }
        try await waitUntil("the squatter to bind or give up", timeout: .seconds(10)) {
            process.stdout.contains("bound") || process.stdout.contains("cannot bind") || !process.isRunning
        }
        return process
    }
}

/// Running a process as another user (`nobody`, uid 65534): root and `setpriv` needed, which CI
/// has (it runs the suite as root).
enum AnotherUser {
    static let uid: uid_t = 65534
    static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
    /// The system's Python: a user's own (pyenv under /root, say) is out of nobody's reach.
    static let python = "/usr/bin/python3"
    static let arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--"]
    static let isAvailable = getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv.path)
        && FileManager.default.isExecutableFile(atPath: python)
    static let why = "needs root, /usr/bin/setpriv and /usr/bin/python3 to run a process as nobody (CI runs the suite as root)"
}
