import type {
	INodeProperties,
	INodePropertyCollection,
	INodePropertyOptions,
	INodeTypeDescription,
} from 'n8n-workflow';

/** One parameter as the editor treats it: where it sits, when it shows, what it starts as. */
interface FlatProperty {
	name: string;
	type: string;
	default: unknown;
	displayOptions?: unknown;
	values?: unknown[];
}

const isCollection = (
	option: INodePropertyOptions | INodeProperties | INodePropertyCollection,
): option is INodePropertyCollection => 'values' in option && Array.isArray(option.values);

const isProperty = (
	option: INodePropertyOptions | INodeProperties | INodePropertyCollection,
): option is INodeProperties => 'type' in option && 'default' in option;

/**
 * The node's parameters in the order the editor lists them, nested ones under their parent's
 * path (`inbox.maxItemKb`, `statements.statement.query`), with the values an options list offers.
 */
function flatProperties(properties: INodeProperties[], prefix = ''): FlatProperty[] {
	return properties.flatMap((property) => {
		const name = `${prefix}${property.name}`;
		const flat: FlatProperty = { name, type: property.type, default: property.default };
		if (property.displayOptions) flat.displayOptions = property.displayOptions;
		const options = property.options ?? [];
		if (property.type === 'options' || property.type === 'multiOptions')
			flat.values = (options as INodePropertyOptions[]).map((option) => option.value);
		const nested = options.flatMap((option) => {
			if (isCollection(option)) return flatProperties(option.values, `${name}.${option.name}.`);
			if (isProperty(option)) return flatProperties([option], `${name}.`);
			return [];
		});
		return [flat, ...nested];
	});
}

/** A node description's parameters, flattened (JSON round trip: what a snapshot file holds). */
export const flatDescription = (description: INodeTypeDescription): FlatProperty[] =>
	JSON.parse(JSON.stringify(flatProperties(description.properties))) as FlatProperty[];
