@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// The one reading of an address (`MachineAddress`), odd ones included.
@Suite("MachineAddress", .timeLimit(.minutes(2)))
struct MachineAddressTests {
    @Test(arguments: [
        ("auth", "auth", nil as String?, false),
        ("counter/42", "counter", "42", true),
        ("session/a/b", "session", "a/b", true),
        ("counter/", "counter", "", false),
        ("/x", "", "x", false),
        ("", "", nil, false),
        ("a/\u{301}b", "a", "\u{301}b", true),
    ])
    func readsTheMachineAndTheKey(address: String, machine: String, key: String?, isInstance: Bool) {
        let parsed = MachineAddress(address)
        #expect(parsed.machine == machine)
        #expect(parsed.key == key)
        #expect(parsed.isInstance == isInstance)
        #expect(MachineAddress.machine(of: address) == machine)
        #expect(MachineAddress.hasKey(address) == (key != nil))
    }

    /// The worker's keyed-instance checks (listing, recovery, restart answers) once asked
    /// `String.contains("/")`, which compares characters: a `/` followed by a combining mark is
    /// one character that is not "/", so such an instance was taken for a single machine.
    @Test func aSlashBeforeACombiningMarkStillMakesAKey() {
        let address = "counter/\u{301}x"
        #expect(!address.contains("/"), "Swift's character view hides the slash")
        #expect(MachineAddress.hasKey(address))
        #expect(MachineAddress(address).isInstance)
    }
}
