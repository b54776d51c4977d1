package import Foundation

/// The directories from `/` down to a path: whoever may change one of them decides what the
/// path leads to (renames the directory below away and puts their own there, or a link).
/// So each must be this user's or root's and writable by nobody else; a sticky one (as `/tmp`)
/// passes, since its sticky bit keeps others from renaming or removing our entry in it, and an
/// entry another user made first is theirs, refused by its owner. A symbolic link on the way
/// must be this user's or root's too (in a sticky directory anyone may make one, pointing
/// anywhere, a directory of ours included), and where it leads is checked the same way.
///
/// Used for ipc sockets (``LocalEndpoint/checkSocket(_:uid:)``) and for the runtime, data and
/// audit directories (``PrivateDirectory``). The walk is pure over ``Lookup``: tests give it
/// made-up `lstat` facts.
package enum DirectoryChain {
    /// How the walk sees the file system.
    package struct Lookup: Sendable {
        /// `lstat`: `nil` when nothing is there.
        package var facts: @Sendable (String) throws(PathProblem) -> PathFacts?
        /// `readlink`: what a link says, one step (not `realpath`, which would follow links
        /// in the target unchecked).
        package var readLink: @Sendable (String) throws(PathProblem) -> String

        package init(facts: @escaping @Sendable (String) throws(PathProblem) -> PathFacts?,
                     readLink: @escaping @Sendable (String) throws(PathProblem) -> String) {
            self.facts = facts
            self.readLink = readLink
        }

        /// The real file system.
        package static let system = Lookup(facts: { (path: String) throws(PathProblem) in try PathFacts.of(path) },
                                           readLink: { (path: String) throws(PathProblem) in
                                               var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                                               let count = readlink(path, &buffer, Int(PATH_MAX))
                                               guard count >= 0 else { throw .cannotInspect(errno: errno) }
                                               return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                                           })
    }

    /// Checks every directory above `path` (not `path` itself), as the kernel walks it.
    /// - Parameters:
    ///   - uid: The user they must belong to (or root).
    ///   - allowMissing: Whether a missing directory ends the walk quietly (what is missing
    ///     will be created, and checked then); otherwise it is ``PathProblem/missing``.
    /// - Returns: Whether every directory above `path` exists.
    /// - Throws: ``PrivateDirectory/Refusal`` naming the directory or link and what is wrong.
    @discardableResult
    package static func checkAbove(_ path: String, uid: uid_t, allowMissing: Bool = false,
                                   lookup: Lookup = .system) throws(PrivateDirectory.Refusal) -> Bool {
        try walk(path, uid: uid, allowMissing: allowMissing, lookup: lookup, depth: 0)
    }

    private static func walk(_ path: String, uid: uid_t, allowMissing: Bool, lookup: Lookup,
                             depth: Int) throws(PrivateDirectory.Refusal) -> Bool {
        guard depth < 16 else { throw PrivateDirectory.Refusal(path: path, problem: .cannotInspect(errno: ELOOP)) }
        var current = "/"
        try judge(current, .ancestorDirectory, uid: uid, lookup: lookup)
        for component in path.split(separator: "/").dropLast() {
            let next = current == "/" ? "/" + component : current + "/" + component
            let facts: PathFacts?
            do throws(PathProblem) {
                facts = try lookup.facts(next)
            } catch {
                throw PrivateDirectory.Refusal(path: next, problem: error)
            }
            guard let facts else {
                if allowMissing { return false }
                throw PrivateDirectory.Refusal(path: next, problem: .missing)
            }
            if facts.kind == .symlink {
                // Who made the link decides where it leads: this user or root only.
                if let problem = PathRule.ancestorLink.judge(facts, uid: uid) {
                    throw PrivateDirectory.Refusal(path: next, problem: problem)
                }
                do throws(PathProblem) {
                    let target = try lookup.readLink(next)
                    current = target.hasPrefix("/") ? target : current + "/" + target
                } catch {
                    throw PrivateDirectory.Refusal(path: next, problem: error)
                }
                // The target is walked as a path of its own (its links checked the same way);
                // `current/.` puts `current` itself among the directories checked.
                guard try walk(current + "/.", uid: uid, allowMissing: allowMissing, lookup: lookup, depth: depth + 1) else { return false }
                continue
            }
            if let problem = PathRule.ancestorDirectory.judge(facts, uid: uid) {
                throw PrivateDirectory.Refusal(path: next, problem: problem)
            }
            current = next
        }
        return true
    }

    private static func judge(_ path: String, _ rule: PathRule, uid: uid_t, lookup: Lookup) throws(PrivateDirectory.Refusal) {
        do throws(PathProblem) {
            guard let facts = try lookup.facts(path) else { throw PathProblem.missing }
            if let problem = rule.judge(facts, uid: uid) { throw problem }
        } catch {
            throw PrivateDirectory.Refusal(path: path, problem: error)
        }
    }
}
