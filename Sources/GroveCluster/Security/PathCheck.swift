package import Foundation

/// What `lstat` says about one path: enough to decide who could have put it there. Links are
/// never followed: a link is what it is, whoever can change it decides where it leads.
package struct PathFacts: Sendable, Equatable {
    /// The kind of file.
    package enum Kind: String, Sendable {
        case directory, symlink, socket, regular = "regular file", other = "special file"
    }

    package var kind: Kind
    /// The owner's uid.
    package var owner: uid_t
    /// The permission bits, with the sticky bit (`st_mode & 0o7777`).
    package var mode: mode_t

    package init(kind: Kind, owner: uid_t, mode: mode_t) {
        self.kind = kind
        self.owner = owner
        self.mode = mode
    }

    /// The facts of `path`, `nil` when nothing is there.
    /// - Throws: ``PathProblem/cannotInspect(errno:)`` for any other failure (a directory on
    ///   the way that this user may not enter, say).
    package static func of(_ path: String) throws(PathProblem) -> PathFacts? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw .cannotInspect(errno: code)
        }
        return PathFacts(status)
    }

    /// The facts of an open descriptor (`fstat`).
    package static func of(descriptor: Int32) throws(PathProblem) -> PathFacts {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotInspect(errno: errno) }
        return PathFacts(status)
    }

    init(_ status: stat) {
        let kind: Kind = switch status.st_mode & S_IFMT {
        case S_IFDIR: .directory
        case S_IFLNK: .symlink
        case S_IFSOCK: .socket
        case S_IFREG: .regular
        default: .other
        }
        self.init(kind: kind, owner: status.st_uid, mode: status.st_mode & 0o7777)
    }
}

/// What a path must be to be trusted: its kind, whose it may be, and which permission bits
/// it must not have. ``judge(_:uid:)`` is pure; tests feed it facts.
package struct PathRule: Sendable, Equatable {
    package var kind: PathFacts.Kind
    /// Whether a path of root's passes too (root can do anything anyway).
    package var rootMayOwn: Bool
    /// Permission bits that must be clear.
    package var forbidden: mode_t
    /// Whether the sticky bit makes group and other write harmless (as in `/tmp`: nobody may
    /// remove or rename what another user put there).
    package var stickyAllowsWrite: Bool

    /// A directory of this user's alone: Grove's runtime, data and audit directories
    /// (mode 0700 or stricter).
    package static let privateDirectory = PathRule(kind: .directory, rootMayOwn: false, forbidden: 0o077, stickyAllowsWrite: false)
    /// The directory holding an ipc socket: this user's or root's, where nobody else can create
    /// (or remove) a file.
    package static let socketDirectory = PathRule(kind: .directory, rootMayOwn: true, forbidden: 0o022, stickyAllowsWrite: false)
    /// A directory above it: this user's or root's, where nobody else can rename or replace an
    /// entry (`/tmp` passes: its sticky bit stops that).
    package static let ancestorDirectory = PathRule(kind: .directory, rootMayOwn: true, forbidden: 0o022, stickyAllowsWrite: true)
    /// A symbolic link on the way to a directory: this user's or root's (whoever made it decides
    /// where it leads; in a sticky directory anyone may make one). Its mode means nothing.
    package static let ancestorLink = PathRule(kind: .symlink, rootMayOwn: true, forbidden: 0, stickyAllowsWrite: false)
    /// An ipc socket: this user's.
    package static let socket = PathRule(kind: .socket, rootMayOwn: false, forbidden: 0, stickyAllowsWrite: false)
    /// A file Grove keeps (a store, its lock, the flight recorder, an audit log): this user's.
    package static let privateFile = PathRule(kind: .regular, rootMayOwn: false, forbidden: 0, stickyAllowsWrite: false)

    package init(kind: PathFacts.Kind, rootMayOwn: Bool, forbidden: mode_t, stickyAllowsWrite: Bool) {
        self.kind = kind
        self.rootMayOwn = rootMayOwn
        self.forbidden = forbidden
        self.stickyAllowsWrite = stickyAllowsWrite
    }

    /// What is wrong with a path of `facts` for a process of `uid`; `nil` when nothing is.
    package func judge(_ facts: PathFacts, uid: uid_t) -> PathProblem? {
        if facts.kind == .symlink, kind != .symlink { return .symlink }
        guard facts.kind == kind else { return .wrongKind(facts.kind, expected: kind) }
        guard facts.owner == uid || (rootMayOwn && facts.owner == 0) else { return .owner(facts.owner) }
        let sticky = stickyAllowsWrite && facts.mode & S_ISVTX != 0
        let bad = facts.mode & forbidden & (sticky ? ~mode_t(0o022) : ~mode_t(0))
        guard bad == 0 else { return forbidden == 0o077 ? .accessible(facts.mode) : .writable(facts.mode) }
        return nil
    }

    /// What is wrong with `path`; `nil` when nothing is, and when nothing is there.
    /// - Throws: ``PathProblem/cannotInspect(errno:)`` when `lstat` fails.
    package func problem(at path: String, uid: uid_t) throws(PathProblem) -> PathProblem? {
        guard let facts = try PathFacts.of(path) else { return nil }
        return judge(facts, uid: uid)
    }
}

/// Why a path cannot be trusted, in words that say what to do.
package enum PathProblem: Error, Sendable, Equatable {
    /// A symbolic link where a file or directory belongs.
    case symlink
    /// Something else than what belongs there.
    case wrongKind(PathFacts.Kind, expected: PathFacts.Kind)
    /// Another user's.
    case owner(uid_t)
    /// Readable, writable or enterable by other users (mode shown), where nobody else may.
    case accessible(mode_t)
    /// Writable by other users (mode shown): they could put their own file there.
    case writable(mode_t)
    /// Nothing is there.
    case missing
    /// `lstat` or `fstat` failed.
    case cannotInspect(errno: Int32)
    /// Creating it failed.
    case cannotCreate(errno: Int32)

    /// `<path> is … ; <what to do>`, for a process of `uid`.
    package func describe(_ path: String, uid: uid_t = geteuid()) -> String {
        switch self {
        case .symlink:
            return "\(path) is a symbolic link, which Grove does not follow here (whoever can change a link decides where it "
                + "leads); remove it (rm \(path)) and let Grove create what belongs there, or name the real path"
        case .wrongKind(let kind, let expected):
            return "\(path) is a \(kind.rawValue) where a \(expected.rawValue) belongs; remove it (rm \(path)) or name another path"
        case .owner(0) where uid != 0:
            // A directory of root's, as /tmp or /var/lib: never to be removed, nor given away.
            return "\(path) belongs to \(Self.user(0)), not to you, \(Self.user(uid)), and Grove uses only what is yours there; "
                + "name another path, of your own (a directory Grove may create with mode 0700)"
        case .owner(let owner):
            return "\(path) belongs to \(Self.user(owner)), not to you, \(Self.user(uid)): whoever owns it decides what is in it "
                + "(another user's socket, a link); have it removed (rm -r \(path), as its owner or root)"
        case .accessible(let mode) where mode & S_ISVTX != 0:
            // /tmp, say: shared on purpose; chmod would break the host.
            return "\(path) has mode \(Self.octal(mode)): it is shared by all users (as /tmp is); name a path of your own "
                + "below it, which Grove creates with mode 0700 (as \(path)/grove-\(Self.name(uid)))"
        case .accessible(let mode):
            return "\(path) has mode \(Self.octal(mode)): other users may enter or read it; run chmod 700 \(path)"
        case .writable(let mode) where mode & S_ISVTX != 0:
            // /tmp: the sticky bit keeps others from removing a file, not from making its name first.
            return "\(path) has mode \(Self.octal(mode)): any user may create files in it (its sticky bit stops them "
                + "removing yours, not making a socket's name before you do); put the socket in a directory of your own "
                + "(mkdir -m 700 DIR, then ipc://DIR/NAME), or leave the endpoint out to use Grove's runtime directory"
        case .writable(let mode):
            return "\(path) has mode \(Self.octal(mode)): other users may create, rename or remove files in it; "
                + "run chmod go-w \(path), or use a directory only you can write"
        case .missing:
            return "\(path) does not exist; create it (mkdir -m 700 \(path)) or name another path"
        case .cannotInspect(let code):
            return "cannot inspect \(path) (\(String(cString: strerror(code)))); check that this user may reach it"
        case .cannotCreate(let code):
            return "cannot create \(path) (\(String(cString: strerror(code)))); check the permissions of its parent"
        }
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode, radix: 8) }

    /// `nobody`, or `65534` when the name is unknown.
    static func name(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }

    /// `nobody (uid 65534)`, or `uid 65534` when the name is unknown.
    static func user(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "\(String(cString: name)) (uid \(uid))"
    }
}
