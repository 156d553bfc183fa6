// Copies what tsc does not emit into dist/: node and credential icons, and the store's
// numbered SQL migrations (read at run time by lib/store/migrations.ts).
const { src, dest, parallel } = require('gulp');

function buildIcons() {
	return src(['nodes/**/*.{png,svg}', 'credentials/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

function buildMigrations() {
	return src('lib/store/migrations/*.sql', { base: '.' }).pipe(dest('dist'));
}

exports['build:icons'] = buildIcons;
exports['build:migrations'] = buildMigrations;
exports.build = parallel(buildIcons, buildMigrations);
