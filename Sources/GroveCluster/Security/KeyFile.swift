package import Foundation
package import ZeroMQ

/// CURVE keys in ZeroMQ's certificate files (ZPL, as czmq's `zcert` and pyzmq's
/// `zmq.auth.create_certificates` write them): `NAME.key` holds the public key and may be
/// shared; `NAME.key_secret` holds both keys, mode 0600, and never leaves its host. pyzmq reads
/// either with `zmq.auth.load_certificate(path)`.
///
/// ```
/// #   ZeroMQ CURVE **Secret** Certificate (written by fsm-keys)
/// metadata
///     name = "edge"
/// curve
///     public-key = "<40 Z85 characters>"
///     secret-key = "<40 Z85 characters>"
/// ```
package enum KeyFile {
    /// Why a key file cannot be used, naming the file and what to do.
    package struct Problem: Error, CustomStringConvertible, Equatable {
        package let path: String
        package let reason: String
        package var description: String { "\(path): \(reason)" }
    }

    /// The secret file's name for a certificate base name: `NAME.key_secret`.
    package static func secretPath(_ base: String) -> String { base + ".key_secret" }
    /// The public file's name: `NAME.key`.
    package static func publicPath(_ base: String) -> String { base + ".key" }

    /// Writes a new pair as `base.key` (0644) and `base.key_secret` (0600), refusing to
    /// replace existing files unless `replacing`. Each file is made anew, never opened through
    /// a link nor over another file: replacing removes the old entry (a link, not what it
    /// points to) and creates the file exclusively. The directory must be one nobody else can
    /// write, nor any directory above it (``DirectoryChain``): whoever can would plant a link
    /// or a file of theirs to read the secret from, or swap the directory.
    /// - Returns: The two paths, public first.
    @discardableResult
    package static func write(_ keys: CurveKeyPair, base: String, name: String, replacing: Bool = false,
                              uid: uid_t = geteuid()) throws(Problem) -> (public: String, secret: String) {
        let (publicFile, secretFile) = (publicPath(base), secretPath(base))
        try checkDirectory(of: base, uid: uid)
        for path in [publicFile, secretFile] {
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            guard replacing else {
                throw Problem(path: path, reason: "exists already; choose another name, or pass --force to replace the key pair (clients and workers holding the old one will be refused)")
            }
            // The entry itself goes (a link: the link, never its target).
            guard unlink(path) == 0 || errno == ENOENT else {
                throw Problem(path: path, reason: "cannot remove the old file to replace it: \(String(cString: strerror(errno)))")
            }
        }
        try writeFile(secretFile, text: text(keys, name: name, secret: true), mode: 0o600)
        try writeFile(publicFile, text: text(keys, name: name, secret: false), mode: 0o644)
        return (publicFile, secretFile)
    }

    /// The public key in a `.key` or `.key_secret` file.
    /// A public key given as its 40 Z85 characters or as a `.key` file, as Z85.
    /// A file that exists wins: `/` and `.` are Z85 characters, so a path of exactly 40
    /// characters also reads as a key.
    package static func z85(ofKeyOrFile keyOrPath: String) throws(Problem) -> String {
        try publicKey(ofKeyOrFile: keyOrPath).z85
    }

    /// ``z85(ofKeyOrFile:)`` as a key.
    package static func publicKey(ofKeyOrFile keyOrPath: String) throws(Problem) -> CurveKey {
        if !FileManager.default.fileExists(atPath: keyOrPath), let key = CurveKey(z85: keyOrPath) { return key }
        return try publicKey(at: keyOrPath)
    }

    package static func publicKey(at path: String) throws(Problem) -> CurveKey {
        let fields = try read(path)
        guard let text = fields["public-key"] else {
            throw Problem(path: path, reason: "no public-key line; is this a ZeroMQ certificate file (fsm-keys new writes them)?")
        }
        guard let key = CurveKey(z85: text) else {
            throw Problem(path: path, reason: "the public-key is not 40 Z85 characters")
        }
        return key
    }

    /// The key pair in a `.key_secret` file, which must not be readable by group or others and
    /// whose public key must belong to its secret key.
    package static func keyPair(at path: String) throws(Problem) -> CurveKeyPair {
        // Read first: a file without a secret (a public `.key` named by mistake) is told so,
        // not told to be chmod-ed; a secret is refused before it is used.
        let fields = try read(path)
        if fields["secret-key"] != nil { try checkPrivate(path) }
        return try keyPair(fields: fields, path: path)
    }

    /// The key pair in the text of a `.key_secret` file that arrived another way (standard input).
    package static func keyPair(text: String, source: String) throws(Problem) -> CurveKeyPair {
        try keyPair(fields: fields(text), path: source)
    }

    private static func keyPair(fields: [String: String], path: String) throws(Problem) -> CurveKeyPair {
        guard let text = fields["secret-key"] else {
            guard fields["public-key"] != nil else {
                throw Problem(path: path, reason: "no secret-key line; is this a ZeroMQ certificate file (fsm-keys new writes them)?")
            }
            throw Problem(path: path, reason: "no secret-key line: this is a public key file; name the NAME.key_secret file instead")
        }
        guard let secret = CurveKey(z85: text) else {
            throw Problem(path: path, reason: "the secret-key is not 40 Z85 characters")
        }
        let pair: CurveKeyPair
        do {
            pair = try CurveKeyPair.derive(from: secret)
        } catch {
            throw Problem(path: path, reason: "cannot use CURVE: \(error)")
        }
        if let written = fields["public-key"], CurveKey(z85: written) != pair.publicKey {
            throw Problem(path: path, reason: "its public-key does not belong to its secret-key; make a new pair with fsm-keys new")
        }
        return pair
    }

    /// Refuses a secret file that group or others may read or write (as ssh does).
    static func checkPrivate(_ path: String) throws(Problem) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Problem(path: path, reason: "cannot read it: \(String(cString: strerror(errno)))")
        }
        if info.st_mode & 0o077 != 0 {
            throw Problem(path: path, reason: String(format: "holds a secret key but its mode is %03o; run chmod 600 on it", info.st_mode & 0o777))
        }
    }

    /// The `key = value` lines of a ZPL file, comments and sections aside, quotes removed.
    private static func read(_ path: String) throws(Problem) -> [String: String] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(filePath: path))
        } catch {
            throw Problem(path: path, reason: "cannot read it: \(error.localizedDescription)")
        }
        return fields(String(decoding: data, as: UTF8.self))
    }

    private static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
            fields[key] = value
        }
        return fields
    }

    /// The text of a certificate file for `keys`: the secret one when `secret`.
    package static func text(_ keys: CurveKeyPair, name: String, secret: Bool) -> String {
        let banner = secret
            ? "#   ZeroMQ CURVE **Secret** Certificate, written by fsm-keys\n#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n"
            : "#   ZeroMQ CURVE Public Certificate, written by fsm-keys\n#   Give it to the coordinator that should accept this key (the topology names it).\n"
        let quotedName = name.replacingOccurrences(of: "\"", with: "'")
        var text = banner + "\nmetadata\n    name = \"\(quotedName)\"\ncurve\n    public-key = \"\(keys.publicKey.z85)\"\n"
        if secret { text += "    secret-key = \"\(keys.secretKey.z85)\"\n" }
        return text
    }

    /// Refuses a directory for key files that another user can write, or one under such.
    private static func checkDirectory(of base: String, uid: uid_t) throws(Problem) {
        let directory = (base as NSString).deletingLastPathComponent
        let absolute = directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        let advice = "key files go in a directory only you can write (mkdir -m 700 DIR, then fsm-keys new NAME --dir DIR)"
        do throws(PrivateDirectory.Refusal) {
            // `/.`: the directory itself is walked too (a link to it followed and checked).
            try DirectoryChain.checkAbove(absolute + "/.", uid: uid)
        } catch {
            throw Problem(path: error.path, reason: String(error.problem.describe(error.path, uid: uid).dropFirst(error.path.count + 1))
                          + "; " + advice)
        }
        // Sticky (as /tmp) or not: others may make files in it, the names fsm-keys is about to use.
        var status = stat()
        if stat(absolute, &status) == 0, status.st_mode & 0o022 != 0 {
            throw Problem(path: directory, reason: "has mode \(PathProblem.octal(status.st_mode & 0o7777)): other users may create "
                          + "files in it; \(advice)")
        }
    }

    private static func writeFile(_ path: String, text: String, mode: mode_t) throws(Problem) {
        // Created with its final mode, so a secret is never readable by others, not even briefly;
        // exclusively and not through a link: what is there already is never written into.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            if errno == EEXIST {
                throw Problem(path: path, reason: "appeared while the key pair was written (another process made it); "
                              + "check who writes to this directory, remove it, and run fsm-keys again")
            }
            throw Problem(path: path, reason: "cannot write it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, mode) == 0 else {
            throw Problem(path: path, reason: "cannot set its mode: \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw Problem(path: path, reason: "cannot write it: \(String(cString: strerror(errno)))")
        }
    }
}
