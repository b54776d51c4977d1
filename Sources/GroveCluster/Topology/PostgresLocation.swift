import Foundation

/// Where a PostgreSQL machine store lives and how to sign in, from a `postgres://` URL and a
/// password kept apart from it: in a file (mode 0600, the worker's user's) or an environment
/// variable, never in the URL, the topology or a command line (`ps` shows those to every user).
///
/// `postgres://grove@127.0.0.1:5432/grove?sslmode=require` names the user, host, port (5432
/// when absent) and database; `sslmode` is `disable` (the default, for loopback) or `require`.
package struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var user: String
    package var database: String
    package var requiresTLS: Bool
    /// Never printed: ``description`` leaves it out.
    package var password: String?

    /// What is wrong with a URL or a password file, and what to do; never the password.
    package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        package var message: String
        /// The password file could not be read, or others may read it.
        package var permission = false

        init(_ message: String, permission: Bool = false) {
            self.message = message
            self.permission = permission
        }

        package var description: String { message }
    }

    /// The environment variable read for the password when no file is given.
    package static let passwordVariable = "GROVE_POSTGRES_PASSWORD"

    /// The URL without the password, for messages.
    package var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (requiresTLS ? "?sslmode=require" : "")
    }

    /// Parses `url` and reads the password from `passwordFile` when given, else from
    /// ``passwordVariable`` in `environment` (no password when neither is set: a server that
    /// trusts the connection).
    /// - Throws: ``Problem`` naming what is wrong with the URL or the file and what to write
    ///   instead.
    package init(url: String, passwordFile: String? = nil,
                 environment: [String: String] = ProcessInfo.processInfo.environment) throws(PostgresLocation.Problem) {
        let example = "postgres://grove@127.0.0.1:5432/grove"
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw Problem("the store URL is not a postgres:// URL; write it like \(example)")
        }
        guard components.password == nil else {
            throw Problem("the store URL holds a password, which anyone who reads the topology or `ps` would see; "
                             + "remove it and put the password in a file (durability.postgres.passwordFile) or in \(Self.passwordVariable)")
        }
        guard let host = components.host, !host.isEmpty else { throw Problem("the store URL names no host; write it like \(example)") }
        guard let user = components.user, !user.isEmpty else { throw Problem("the store URL names no user; write it like \(example)") }
        let database = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard !database.isEmpty, !database.contains("/") else {
            throw Problem("the store URL names no database (its path); write it like \(example)")
        }
        var requiresTLS = false
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw Problem("the store URL has '\(item.name)', which Grove does not know; only sslmode=disable or sslmode=require")
            }
            switch item.value {
            case "disable": requiresTLS = false
            case "require": requiresTLS = true
            default: throw Problem("sslmode '\(item.value ?? "")' in the store URL: use disable or require")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user
        self.database = database
        self.requiresTLS = requiresTLS
        if let passwordFile {
            password = try Self.readPassword(passwordFile)
        } else {
            password = environment[Self.passwordVariable]
        }
    }

    /// The first line of `path`, refused when others may read the file.
    static func readPassword(_ path: String) throws(PostgresLocation.Problem) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Problem("cannot read the store's password file \(path): \(String(cString: strerror(errno))); "
                             + "create it with the password on its first line, mode 0600", permission: true)
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Problem("the store's password file \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                             + "run chmod 600 \(path)", permission: true)
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Problem("cannot read the store's password file \(path) as UTF-8 text", permission: true)
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard !line.isEmpty else { throw Problem("the store's password file \(path) is empty; put the password on its first line") }
        return line
    }
}
