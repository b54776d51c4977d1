import Foundation
import Testing

/// The house rules every test file keeps, read from the sources: each suite has a time limit,
/// so a test that hangs fails in minutes instead of holding CI for its 90; and a type whose
/// tests run is an explicit `@Suite`, so it cannot miss the limit by being implicit.
@Suite("Suite rules", .timeLimit(.minutes(2)))
struct SuiteRulesTests {
    /// `Tests/`, found from this file's path.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under `Tests/`, with its text.
    static func sources() throws -> [(path: String, text: String)] {
        let files = FileManager.default.enumerator(at: testsDirectory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { ($0.path.replacingOccurrences(of: testsDirectory.path + "/", with: ""), try String(contentsOf: $0, encoding: .utf8)) }
    }

    /// The `@Suite` attributes of `text` (those that begin a line, not ones named in comments or
    /// strings), each with its arguments up to the matching parenthesis.
    static func suiteAttributes(in text: String) -> [String] {
        let characters = Array(text)
        var found: [String] = []
        var lineStart = true
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\n" {
                lineStart = true
            } else if lineStart, character == " " || character == "\t" {
                // Indentation: still the start of the line.
            } else if lineStart, String(characters[index..<min(index + 6, characters.count)]) == "@Suite" {
                var end = index + 6
                if end < characters.count, characters[end] == "(" {
                    var depth = 0
                    while end < characters.count {
                        if characters[end] == "(" { depth += 1 }
                        if characters[end] == ")" { depth -= 1 }
                        end += 1
                        if depth == 0 { break }
                    }
                }
                found.append(String(characters[index..<end]))
                index = end
                lineStart = false
                continue
            } else {
                lineStart = false
            }
            index += 1
        }
        return found
    }

    @Test func everySuiteHasATimeLimit() throws {
        let sources = try Self.sources()
        #expect(sources.count > 100, "found \(sources.count) test files under \(Self.testsDirectory.path)")
        for (path, text) in sources {
            for attribute in Self.suiteAttributes(in: text) where !attribute.contains(".timeLimit(") {
                Issue.record("\(path): \(attribute) has no .timeLimit; add one (minutes the suite may take)")
            }
        }
    }

    /// Every test starts when the run starts and then waits for one of the cooperative pool's
    /// threads (two on this 2-core machine), so its time limit counts the wait behind the whole
    /// unit suite: about 20 s quiet, about 100 s beside a build, when every one-minute suite
    /// failed at once. Two minutes is the least a suite may have.
    @Test func noSuiteHasLessThanTwoMinutes() throws {
        for (path, text) in try Self.sources() {
            for attribute in Self.suiteAttributes(in: text) where attribute.contains(".timeLimit(.minutes(1))") || attribute.contains(".timeLimit(.seconds(") {
                Issue.record("\(path): \(attribute) allows less than 2 minutes; a loaded 2-core machine fails healthy tests at that (give it .minutes(2))")
            }
        }
    }

    @Test func everyFileWithTestsDeclaresItsSuite() throws {
        for (path, text) in try Self.sources() where text.contains("@Test") && Self.suiteAttributes(in: text).isEmpty {
            // A comment may name @Test without declaring one.
            let declares = text.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("@Test") }
            if declares { Issue.record("\(path) declares tests but no @Suite: make its type a @Suite with a .timeLimit") }
        }
    }

    @Test func theRulesSeeAMissingLimit() {
        let text = "/// an `@Suite` in a comment\n@Suite struct A {}\n    @Suite(\"b\",\n .timeLimit(.minutes(2))) struct B {}"
        #expect(Self.suiteAttributes(in: text) == ["@Suite", "@Suite(\"b\",\n .timeLimit(.minutes(2)))"])
    }
}
