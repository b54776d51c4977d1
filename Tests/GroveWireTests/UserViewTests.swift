import Foundation
import GroveTestSupport
import Testing

/// GroveWire as a user's module sees it, from outside the package: `@BinaryCodable` expands into
/// the user's module, where only public declarations are in sight, so a reader or writer method
/// the expansion calls must stay public. Inside the package (these tests, GroveCluster) a
/// `package` one would compile and hide the break.
@Suite("GroveWire from outside the package", .timeLimit(.minutes(2)))
struct UserViewTests {
    /// `-load-plugin-executable` for the macro built beside this test binary.
    static func macroArguments() throws -> [String] {
        let binary = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let tool = binary.deletingLastPathComponent().appendingPathComponent("GroveMacros-tool")
        try #require(FileManager.default.isExecutableFile(atPath: tool.path), "no macro plugin at \(tool.path)")
        return ["-load-plugin-executable", tool.path + "#GroveMacros"]
    }

    @Test func aUsersBinaryCodableTypesAndMessagesCompile() async throws {
        let program = """
            import GroveWire

            @BinaryCodable
            struct Order: Codable, Equatable {
                var id: String
                var cents: Int
                var note: String?
            }

            @BinaryCodable
            enum Step: Codable {
                case add(cents: Int)
                case pay
            }

            func roundTrip() throws {
                let bytes = try BinaryCodec.encode(Order(id: "a", cents: 1, note: nil))
                _ = try BinaryCodec.decode(Order.self, from: bytes)
                _ = try BinaryCodec.encode(Step.add(cents: 3))
                let message = WireMessage(Header(.event, flags: [.binary], correlation: 7), address: "shop/1", payload: bytes)
                _ = try WireMessage(frames: message.frames)
                _ = try Header(message.header.bytes).kind.name
                _ = WireError(.unknownMachine, "no").code == .unknownMachine
                _ = JSONValue.string("x")
            }
            """
        let result = try await typeCheck(program, arguments: try Self.macroArguments())
        #expect(result.status == 0, "a user's program did not compile against GroveWire's public surface:\n\(result.output)")
    }

    /// What coordinator and workers say to each other is `@_spi(GroveInternal)`: out of a user's
    /// sight unless the user asks for it by name (docs/ARCHITECTURE.md, "Modules", GroveWire).
    @Test(arguments: [
        "Welcome", "Registration", "HeartbeatNote", "BatchBuilder", "IOCallHead", "IOCallResult", "CorrelationEpoch",
        "InstancesReport", "CrashReport", "QuarantinedPatterns", "Observation",
    ])
    func wireInternalsAreOutOfAUsersSight(name: String) async throws {
        let use = "func use(_ value: \(name)) { _ = value }"
        let plain = try await typeCheck("import GroveWire\n" + use)
        #expect(plain.status != 0, "a user's program that does not import GroveWire's SPI sees \(name)")
        #expect(plain.output.contains(name), "swiftc refused the program but not for \(name):\n\(plain.output)")
        let asked = try await typeCheck("@_spi(GroveInternal) import GroveWire\n" + use)
        #expect(asked.status == 0, "with the SPI imported, \(name) did not compile:\n\(asked.output)")
    }
}
