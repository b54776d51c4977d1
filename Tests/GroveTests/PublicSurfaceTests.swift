import Foundation
import Testing

/// What Grove exports to its users stays what was chosen, read from the sources: GroveWire's
/// public types are the ones a user meets (docs/ARCHITECTURE.md, "Modules", lists them), and
/// its wire internals stay `package`; the library products are the ones users depend on, and
/// GroveExamples is not one of them. A change to either list is meant to be a decision: the
/// failure says where to record it.
@Suite("Public surface", .timeLimit(.minutes(1)))
struct PublicSurfaceTests {
    /// The package's root, found from this file's path (`Tests/GroveTests/…`).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// GroveWire's public types (and public extensions, whose members are public without saying
    /// so), as `kind Name` with nested types qualified by their parent.
    static let groveWireTypes: Set<String> = [
        // The messages a client sends and reads (Client.request, Watcher, docs/PROTOCOL.md).
        "enum MessageKind", "struct Header", "struct Header.Flags", "struct WireMessage",
        "struct WireError", "struct WireError.Code", "enum JSONValue",
        // Client.list, Client.snapshot and Watcher's answers.
        "struct Listing", "struct Listing.Machine", "struct Listing.Worker",
        "struct StateSnapshot", "struct StateSnapshot.Entry", "struct PublicationSequence",
        // The topology's policy values (Topology's public properties).
        "enum Durability", "enum DurabilityFlush", "struct AuditPlacement", "enum EndPolicy",
        "struct RestartPolicy", "struct RestartPolicy.Backoff",
        // The binary codec, @BinaryCodable and what its expansion names in a user's module.
        "enum BinaryCodec", "protocol BinaryCodable", "macro BinaryCodable", "struct BinaryCodingError",
        "struct BinaryCodingError.Code", "struct BinaryCodableReader", "struct BinaryCodableWriter",
        "struct BinaryCodableKey",
    ]

    /// At most this many public declarations (types and members) in GroveWire: members of the
    /// public types may not grow unnoticed either.
    static let groveWireCeiling = 216

    /// The library products users may depend on.
    static let libraries: Set<String> = [
        "Grove", "GroveRuntime", "GroveTesting", "GroveTea", "GroveCheck", "GroveWire", "GroveCluster",
    ]

    /// One declaration found in a source file.
    struct Declaration: Equatable {
        var isPublic: Bool
        /// `kind Name` for a type, typealias, macro or extension; nil for anything else.
        var type: String?
    }

    static let typeKinds: Set<String> = ["struct", "enum", "class", "actor", "protocol", "typealias", "macro", "extension"]
    static let accessWords: Set<String> = ["public", "package", "internal", "fileprivate", "private", "open"]
    static let modifierWords: Set<String> = [
        "final", "indirect", "static", "nonisolated", "mutating", "nonmutating", "override", "convenience",
        "required", "lazy", "weak", "unowned", "dynamic", "consuming", "borrowing", "isolated",
    ]

    /// The declarations of `text`, one per line that begins with one (after attributes and
    /// modifiers), with types named by their nesting: a line indented deeper than a type's
    /// declaration is inside it. The sources are formatted, so indentation is nesting.
    static func declarations(in text: String) -> [Declaration] {
        var found: [Declaration] = []
        var enclosing: [(indent: Int, name: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let indent = line.prefix { $0 == " " }.count
            var words = Self.words(afterAttributesIn: line.dropFirst(indent))
            guard let first = words.first, !first.hasPrefix("//") else { continue }
            var isPublic = false
            var isDeclaration = false
            // `public(set)` is the setter's access, not the declaration's.
            while let word = words.first,
                  accessWords.contains(String(word)) || modifierWords.contains(String(word)) || word.hasSuffix("(set)") {
                if word == "public" || word == "open" { isPublic = true }
                isDeclaration = true
                words.removeFirst()
            }
            guard let keyword = words.first else { continue }
            if typeKinds.contains(String(keyword)), words.count > 1 {
                let name = String(words[1].prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
                while let last = enclosing.last, last.indent >= indent { enclosing.removeLast() }
                let qualified = (enclosing.last.map { $0.name + "." } ?? "") + name
                enclosing.append((indent, qualified))
                found.append(Declaration(isPublic: isPublic, type: "\(keyword) \(qualified)"))
            } else if isDeclaration {
                found.append(Declaration(isPublic: isPublic, type: nil))
            }
        }
        return found
    }

    /// The words of a declaration line after its attributes (`@inlinable`, `@available(…)`).
    static func words(afterAttributesIn line: Substring) -> [Substring] {
        var rest = line
        while rest.first == "@" {
            var depth = 0
            var end = rest.startIndex
            while end < rest.endIndex {
                let character = rest[end]
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
                if depth == 0, character == " " { break }
                end = rest.index(after: end)
            }
            rest = rest[end...].drop { $0 == " " }
        }
        return rest.split(separator: " ")
    }

    static func groveWireDeclarations() throws -> [(path: String, declaration: Declaration)] {
        let directory = root.appendingPathComponent("Sources/GroveWire")
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 20, "found \(files.count) Swift files under \(directory.path)")
        return try files.flatMap { file in
            let path = file.path.replacingOccurrences(of: root.path + "/", with: "")
            return declarations(in: try String(contentsOf: file, encoding: .utf8)).map { (path, $0) }
        }
    }

    @Test func groveWireExportsOnlyWhatUsersMeet() throws {
        let found = try Self.groveWireDeclarations()
        let types = found.filter(\.declaration.isPublic).compactMap { item in item.declaration.type.map { ($0, item.path) } }
        let names = Set(types.map(\.0))
        for (type, path) in types where !Self.groveWireTypes.contains(type) {
            Issue.record("""
                \(path): \(type) is public. Wire internals are `package`; if users need it, add it to \
                PublicSurfaceTests.groveWireTypes and to GroveWire's list in docs/ARCHITECTURE.md ("Modules")
                """)
        }
        for type in Self.groveWireTypes.subtracting(names).sorted() {
            Issue.record("""
                \(type) is no longer public in GroveWire; remove it from PublicSurfaceTests.groveWireTypes \
                and from GroveWire's list in docs/ARCHITECTURE.md ("Modules")
                """)
        }
        let count = found.filter(\.declaration.isPublic).count
        #expect(count <= Self.groveWireCeiling, """
            GroveWire has \(count) public declarations, more than the \(Self.groveWireCeiling) chosen: make the new \
            ones `package` unless a user calls them, else raise PublicSurfaceTests.groveWireCeiling
            """)
        // Welcome stands for the wire internals: the reader finds them, and not as public.
        #expect(found.contains { $0.declaration.type == "struct Welcome" && !$0.declaration.isPublic },
                "Sources/GroveWire declares Welcome, and not as public")
    }

    @Test func architectureListsGroveWiresPublicTypes() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("GroveWire ") }, "ARCHITECTURE.md's Modules names GroveWire")
        let entry = lines[start...].prefix { $0 == lines[start] || $0.hasPrefix(" ") }.joined(separator: " ")
        let words = Set(entry.split { !($0.isLetter || $0.isNumber || $0 == "@") })
        for type in Self.groveWireTypes where !type.contains(".") {
            let name = type.split(separator: " ")[1]
            #expect(words.contains(name), "docs/ARCHITECTURE.md's GroveWire entry (\"Modules\") does not name \(name)")
        }
    }

    @Test func examplesAreNotAProduct() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let found = Set(manifest.matches(of: /\.library\(name: "([^"]+)"/).map { String($0.output.1) })
        #expect(found == Self.libraries, """
            Package.swift's library products are \(found.sorted()); the chosen ones are \(Self.libraries.sorted()). \
            GroveExamples is to read, not to depend on; change PublicSurfaceTests.libraries and \
            docs/ARCHITECTURE.md ("Modules") only with a reason
            """)
    }

    @Test func theReaderSeesNestingAccessAndAttributes() {
        let text = """
            /// A `public struct` in a comment
            public struct A: Sendable {
                public struct B {}
                package var hidden: Int
                @inlinable public func f() {}
            }
            @usableFromInline package enum C {
                public static let x = 1
            }
            public extension D {}
            @available(macOS 15, *) public(set) var e = 0
            """
        #expect(Self.declarations(in: text) == [
            .init(isPublic: true, type: "struct A"), .init(isPublic: true, type: "struct A.B"),
            .init(isPublic: false, type: nil), .init(isPublic: true, type: nil),
            .init(isPublic: false, type: "enum C"), .init(isPublic: true, type: nil),
            .init(isPublic: true, type: "extension D"), .init(isPublic: false, type: nil),
        ])
    }
}
