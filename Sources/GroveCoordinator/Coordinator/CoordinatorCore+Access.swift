import GroveCluster

/// Worker keys as the core applies them; a client's roles are ``ClientAccess``'s (GroveCluster),
/// shared with a worker that serves clients directly.
extension CoordinatorCore {
    /// Why a registration for worker instance `name` of group `group`, from a connection whose
    /// key made `principal`, is refused; `nil` when the key is the one the topology binds.
    static func registrationForbidden(_ name: String, group: String, principal: Gatekeeper.Principal?, peer: String?) -> String? {
        let from = peer.map { " (peer \($0))" } ?? ""
        switch principal {
        case .trusted: return nil
        case .worker(let keyGroup) where keyGroup == group: return nil
        case .worker(let keyGroup):
            return "a registration as \(name) came with the key of worker group '\(keyGroup)'\(from); \(name) belongs to group '\(group)', "
                + "so it was refused and the registered worker, if any, keeps the name"
        case .client:
            return "a registration as \(name) came with a client key\(from); workers need their group's key"
        case nil:
            return "a registration as \(name) came from a connection with no key the topology knows\(from)"
        }
    }
}
