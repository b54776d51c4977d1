import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// README.md is the front door: short enough to read through, its example topology one the decoder
/// accepts, and every relative link in it and in docs/ leads to a file and heading that exist.
@Suite("README and docs", .timeLimit(.minutes(2)))
struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appending(path: path), encoding: .utf8)
    }

    /// The pages whose links are checked: README.md and every page in docs/.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md"] + docs
    }

    @Test func theReadmeIsAtMost300Lines() throws {
        let lines = try Self.text("README.md").filter { $0 == "\n" }.count
        #expect(lines <= 300, "README.md has \(lines) lines, more than 300: move reference material to docs/ and link it")
    }

    /// The README's topology for a worker of one's own: a keyed machine on the user's worker group,
    /// its io request served by a second group.
    @Test func theShopTopologyDecodesAsTheReadmeDescribesIt() throws {
        let topology = try Topology.load(contentsOf: Self.root.appending(path: "docs/examples/shop.json"), environment: [:])
        #expect(topology.workers.map(\.name) == ["shop", "payments"])
        #expect(topology.workers.allSatisfy { $0.executable == "shop-worker" })
        let checkout = try #require(topology.machine(named: "checkout"))
        #expect(checkout.type == "Checkout" && checkout.keyed && checkout.worker == "shop" && checkout.durability == .state)
        #expect(topology.ioWorkerGroup(for: "ChargeCard") == "payments")
        #expect(topology.placement(ofMachine: "checkout", key: "cart-7") == "shop")
    }

    @Test func theReadmeShowsTheShopTopologyAsTheFileHasIt() throws {
        let file = try Self.text("docs/examples/shop.json").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Self.text("README.md").contains("```json\n" + file + "\n```"),
                "README.md should show docs/examples/shop.json as it is, in a json block:\n\(file)")
    }

    /// The README's Package.swift says which product holds which types (`// Worker,
    /// WorkerConfiguration`): each product is a library of Package.swift and each type it names is
    /// declared public in that module's sources, so a module split cannot leave the README sending
    /// a user to a product that no longer holds what it says.
    @Test func theReadmeNamesTheProductsThatHoldItsTypes() throws {
        let manifest = try Self.text("Package.swift")
        let libraries = Set(manifest.matches(of: /\.library\(name: "([^"]+)"/).map { String($0.output.1) })
        let products = try Self.text("README.md").matches(of: /\.product\(name: "(\w+)", package: "Grove"\),[ ]*\/\/ ([^\n]*)/)
        #expect(products.count >= 3, "found \(products.count) Grove products with a comment in README.md's Package.swift")
        for product in products {
            let module = String(product.output.1)
            #expect(libraries.contains(module), "README.md names the product \(module); Package.swift's libraries are \(libraries.sorted())")
            let types = product.output.2.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.first?.isUppercase == true && $0.allSatisfy { $0.isLetter || $0.isNumber } }
            for type in types {
                #expect(try Self.declares(module, type),
                        "README.md says the product \(module) holds \(type), but no file in Sources/\(module) declares it public")
            }
        }
    }

    /// Whether a file of `Sources/<module>` declares `type` public.
    static func declares(_ module: String, _ type: String) throws -> Bool {
        let directory = root.appending(path: "Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        let declaration = try Regex(#"public (final )?(struct|enum|class|actor|protocol|typealias) "# + type + #"\b"#)
        for case let file as URL in files where file.pathExtension == "swift" {
            if try String(contentsOf: file, encoding: .utf8).contains(declaration) { return true }
        }
        return false
    }

    /// The README's Swift is code that compiles and passes: each block between the markers of a
    /// test file is in the README, comments and spacing aside.
    @Test(arguments: [
        ("Tests/GroveRuntimeTests/ReadmeTourTests.swift", "// README tour: begin", "// README tour: end"),
        ("Tests/GroveRuntimeTests/ReadmeTourTests.swift", "// README tour: host begin", "// README tour: host end"),
        ("Tests/GroveRuntimeTests/ReadmeShopTests.swift", "// README shop: begin", "// README shop: end"),
    ])
    func theReadmeShowsTheCodeItsTestsRun(file: String, begin: String, end: String) throws {
        let source = try Self.text(file)
        let start = try #require(source.range(of: begin + "\n"), "\(file) has no line \(begin)")
        let stop = try #require(source.range(of: end, range: start.upperBound..<source.endIndex), "\(file) has no line \(end)")
        let block = Self.code(source[start.upperBound..<stop.lowerBound])
        #expect(!block.isEmpty)
        #expect(Self.code(try Self.text("README.md")[...]).contains(block),
                "README.md should show the code between \(begin) and \(end) in \(file); change both together")
    }

    /// Swift without its `//` comments, its whitespace runs made one space.
    static func code(_ text: Substring) -> String {
        text.split(separator: "\n").map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line }
            .joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test func everyRelativeLinkResolves() throws {
        var broken: [String] = []
        for page in try Self.pages() {
            let directory = URL(filePath: page).deletingLastPathComponent().relativePath
            for target in MarkdownLinks.targets(in: try Self.text(page)) where !target.contains("://") && !target.hasPrefix("mailto:") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? page : (directory == "." ? parts[0] : directory + "/" + parts[0])
                let path = Self.root.appending(path: file).standardizedFileURL.path
                guard FileManager.default.fileExists(atPath: path) else {
                    broken.append("\(page): \(target): no file \(file)")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md"), !MarkdownLinks.anchors(in: try Self.text(file)).contains(parts[1]) {
                    broken.append("\(page): \(target): no heading in \(file) has the anchor #\(parts[1])")
                }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func anchorsAreMadeAsGitHubMakesThem() {
        let page = """
            # Protocol v1
            ## `journal` beside `none` and `state` (7e2c761), 2026-11-26
            ### Who may send what
            ```
            # not a heading
            ```
            ## Who may send what
            <a id="latest"></a>
            """
        #expect(MarkdownLinks.anchors(in: page) == [
            "protocol-v1", "journal-beside-none-and-state-7e2c761-2026-11-26", "who-may-send-what", "who-may-send-what-1", "latest",
        ])
        #expect(MarkdownLinks.targets(in: "see [a](docs/A.md#x) and `[b](not/a/link)`\n```\n[c](nor/this)\n```\n[d](B.md)")
            == ["docs/A.md#x", "B.md"])
    }
}

/// Links and headings of a Markdown page, outside code.
enum MarkdownLinks {
    /// The targets of inline links `[text](target)`, outside fenced blocks and code spans.
    static func targets(in page: String) -> [String] {
        var found: [String] = []
        for line in prose(page) {
            let text = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset.isMultiple(of: 2) }.map(\.element).joined(separator: " ")
            var rest = Substring(text)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                found.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        return found
    }

    /// The anchors GitHub gives the page's headings (lowercased; only letters, digits, spaces,
    /// `-` and `_` kept; spaces made `-`; a repeated one numbered), and those of `<a id=…>`.
    static func anchors(in page: String) -> [String] {
        var seen: [String: Int] = [:]
        var anchors: [String] = []
        for line in prose(page) {
            if line.hasPrefix("#"), let space = line.firstIndex(of: " "), line[..<space].allSatisfy({ $0 == "#" }) {
                let slug = String(line[line.index(after: space)...].lowercased()
                    .filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }
                    .map { $0 == " " ? "-" : $0 })
                let count = seen[slug, default: 0]
                seen[slug] = count + 1
                anchors.append(count == 0 ? slug : "\(slug)-\(count)")
            }
            var rest = Substring(line)
            while let start = rest.range(of: "<a id=\"") ?? rest.range(of: "<a name=\"") {
                let after = rest[start.upperBound...]
                guard let end = after.firstIndex(of: "\"") else { break }
                anchors.append(String(after[..<end]))
                rest = after[end...]
            }
        }
        return anchors
    }

    /// The page's lines outside fenced code blocks.
    private static func prose(_ page: String) -> [Substring] {
        var inFence = false
        return page.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                return false
            }
            return !inFence
        }
    }
}
