import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@BinaryCodable`: adds `BinaryCodable` with a generated `init(binary:)` and
/// `encode(binary:)` that read and write what the synthesized `Codable` conformance does.
public struct BinaryCodableMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let shape: CodableShape
        do {
            shape = try CodableShape.of(declaration)
        } catch {
            context.diagnose(Diagnostic(node: error.node, message: BinaryCodableDiagnostic(message: error.message)))
            return []
        }
        // The type's own access, or that of the extension it is declared in (`public extension
        // Namespace { struct X }` makes X public).
        var modifiers = declaration.modifiers.map(\.name.text)
        let levels: Set<String> = ["public", "open", "package", "internal", "fileprivate", "private"]
        if !modifiers.contains(where: levels.contains),
           let enclosing = context.lexicalContext.first?.as(ExtensionDeclSyntax.self) {
            modifiers = enclosing.modifiers.map(\.name.text)
        }
        let access = modifiers.contains("public") || modifiers.contains("open") ? "public "
            : modifiers.contains("package") ? "package " : ""
        let generator = BinaryCodableGenerator(shape: shape, access: access)
        let conformance = protocols.isEmpty ? "" : ": GroveWire.BinaryCodable"
        let source = "extension \(type.trimmedDescription)\(conformance) {\n\(generator.members)\n}"
        guard let extensionDecl = DeclSyntax(stringLiteral: source).as(ExtensionDeclSyntax.self) else { return [] }
        return [extensionDecl]
    }
}

struct BinaryCodableDiagnostic: DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "GroveMacros", id: "BinaryCodable") }
    var severity: DiagnosticSeverity { .error }
}
