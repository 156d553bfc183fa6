// What a request carries besides its own headers: the precondition (the version the write was
// built on) and the credentials of n8n's generic auth types.
import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';
import { ItemError, type WriteRequest } from '../../lib';
import { type ItemValueReader, trimmedText } from '../shared/itemValues';
import type { WriteSettings } from './settings';

/** The credentials of the chosen auth type, read once per run; none for no auth and for OAuth2. */
export async function credentialsFor(
	context: IExecuteFunctions,
	authentication: WriteSettings['authentication'],
): Promise<IDataObject | undefined> {
	return authentication === 'none' || authentication === 'oAuth2Api'
		? undefined
		: ((await context.getCredentials(authentication)) as IDataObject);
}

/** The expected version as its header carries it; a time for If-Unmodified-Since as an HTTP date. */
export function preconditionOf(
	settings: WriteSettings,
	read: ItemValueReader | undefined,
	index: number,
): WriteRequest['precondition'] {
	if (!settings.preconditionHeader || !read) return undefined;
	const raw = read(index);
	let value = raw instanceof Date ? raw.toUTCString() : trimmedText(raw);
	if (!value)
		throw new ItemError(
			`Item ${index} has no expected version for its ${settings.preconditionHeader} precondition`,
			index,
			'Map Expected Version to the ETag or version the write was built on; nothing was sent.',
		);
	if (settings.preconditionHeader === 'If-Unmodified-Since' && !/GMT$/.test(value)) {
		const time = new Date(value);
		if (Number.isNaN(time.getTime()))
			throw new ItemError(
				`Item ${index}: the expected last-modified time ${JSON.stringify(value)} is not a date`,
				index,
				'Map Expected Version to the last-modified time the write was built on.',
			);
		value = time.toUTCString();
	}
	if (/[\u0000-\u001f\u007f]/.test(value) || !/^[\t\u0020-\u00ff]*$/.test(value))
		throw new ItemError(
			`Item ${index}: the expected version cannot travel in an HTTP header`,
			index,
			'Map Expected Version to plain text (letters, digits, quotes, punctuation).',
		);
	return { header: settings.preconditionHeader, value };
}

/** Adds the credentials where their auth type puts them: a header, the query or basic auth. */
export function addCredentials(
	credentials: IDataObject | undefined,
	authentication: WriteSettings['authentication'],
	request: { headers: IDataObject; qs: IDataObject; options: IHttpRequestOptions },
): void {
	const { headers, qs, options } = request;
	if (credentials && authentication === 'httpHeaderAuth')
		headers[String(credentials.name)] = credentials.value;
	if (credentials && authentication === 'httpBearerAuth')
		headers.Authorization = `Bearer ${String(credentials.token)}`;
	if (credentials && authentication === 'httpBasicAuth')
		options.auth = { username: String(credentials.user), password: String(credentials.password) };
	if (credentials && authentication === 'httpQueryAuth')
		qs[String(credentials.name)] = credentials.value;
}
