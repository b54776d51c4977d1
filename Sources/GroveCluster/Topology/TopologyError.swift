/// One problem in a topology file: what kind it is, where it is (a JSON path such as
/// `$.machines[2].worker`) and what to do about it.
///
/// Equality compares the code and the path only: the message is for people and may be reworded.
public struct TopologyIssue: Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text, e.g. `"unknown-key"`.
        public var rawValue: String
        /// A code; prefer the named ones.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The file could not be read.
        public static let unreadable = Code(rawValue: "unreadable")
        /// The text is not valid JSON; the message carries the line and column.
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// An object holds the same key twice; JSON would silently keep only the last value.
        public static let duplicateKey = Code(rawValue: "duplicate-key")
        /// A value has the wrong JSON type (a number where a string belongs, ...).
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A required key is absent.
        public static let missingKey = Code(rawValue: "missing-key")
        /// A key the format does not know, usually a typo.
        public static let unknownKey = Code(rawValue: "unknown-key")
        /// Two workers, machines or io placements share a name.
        public static let duplicateName = Code(rawValue: "duplicate-name")
        /// A name refers to a worker group or machine that the topology does not declare.
        public static let unknownReference = Code(rawValue: "unknown-reference")
        /// An endpoint has no supported scheme, or clashes with another endpoint.
        public static let invalidEndpoint = Code(rawValue: "invalid-endpoint")
        /// A value has the right type but is out of range or malformed.
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// A tcp endpoint without CURVE keys, and no explicit `"insecure": true`.
        public static let insecure = Code(rawValue: "insecure")

        /// The raw value.
        public var description: String { rawValue }
    }

    /// What kind of problem this is.
    public var code: Code
    /// Where the problem is, as a JSON path from the document root `$`.
    public var path: String
    /// What is wrong and what to do about it.
    public var message: String

    /// An issue of kind `code` at `path`.
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - path: A JSON path such as `$.routes[0].to`.
    ///   - message: What is wrong and what to do next.
    public init(_ code: Code, at path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public static func == (lhs: TopologyIssue, rhs: TopologyIssue) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(path)
    }

    /// `"<path>: <message>"`.
    public var description: String { "\(path): \(message)" }
}

/// Why a topology could not be loaded: every problem found, each with its JSON path.
///
/// ```swift
/// do {
///     let topology = try Topology.load(contentsOf: url)
/// } catch {
///     print(error)   // one line per issue: "<source>: <path>: <message>"
/// }
/// ```
public struct TopologyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the topology came from: a file path, or a name such as `"<default>"`.
    public var source: String
    /// Every problem found, never empty. Object by object: its unknown keys first, then its
    /// members in the order of the format (name, coordinator, workers, machines, io, routes,
    /// heartbeat, queues, security, durability, audit).
    public var issues: [TopologyIssue]

    /// An error for `source` carrying `issues`.
    /// - Parameters:
    ///   - source: The file path or name shown before each issue.
    ///   - issues: The problems found; should not be empty.
    public init(source: String, issues: [TopologyIssue]) {
        self.source = source
        self.issues = issues
    }

    /// One line per issue: `"<source>: <path>: <message>"`.
    public var description: String {
        issues.map { "\(source): \($0.path): \($0.message)" }.joined(separator: "\n")
    }
}
