-- The per-step open index that migration 23 kept beside the item's identity goes. Two unique
-- indexes on open letters raced: two executions parking the same letter at one moment both
-- passed ON CONFLICT's check on the identity index, and the one that came second met the per-step
-- index, which ON CONFLICT does not arbitrate, as a duplicate-key error instead of updating the
-- open letter. The identity index is as strict for every letter (an item's letter is one per
-- item, any other one per step), so nothing it kept unique is lost. Workers of a version before
-- migration 23 name that index in their park: stop them before this version migrates.
DROP INDEX IF EXISTS :SCHEMA.dead_letters_open_item;
