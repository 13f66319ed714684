import { ConflictError, NotFoundError } from '../shared/errors.js'
import type { Decider } from '../shared/decider.js'
import type { Rate } from './pricing.js'
import type { Zone } from './zones.js'
import { evolve, initialState, type TariffEvent, type TariffState } from './tariff.js'

export type TariffCommand =
  | { type: 'CreateTariff'; data: { id: string; carrier_id: string; name: string; currency: string; service_type_id: number; volumetric_divisor: number; now: Date } }
  | { type: 'PublishRates'; data: { carrier_id: string; zones: Zone[]; rates: Rate[]; now: Date } }
  | { type: 'ActivateTariff'; data: { carrier_id: string; now: Date } }

/** Create, publish the zone/rate table (replacing the last one), activate (needs rates). */
export function decide(command: TariffCommand, state: TariffState): TariffEvent[] {
  const at = command.data.now.toISOString()
  if (command.type === 'CreateTariff') {
    if (state.exists) throw new ConflictError('The tariff already exists.', 'tariff_exists')
    const { now: _now, ...d } = command.data
    return [{ type: 'TariffCreated', data: { ...d, created_at: at } }]
  }
  // Another carrier's tariff is as unknown as a missing one.
  if (!state.exists || state.carrierId !== command.data.carrier_id) throw new NotFoundError('Tariff')
  if (command.type === 'PublishRates') {
    return [{ type: 'TariffRatesPublished', data: { zones: command.data.zones, rates: command.data.rates, published_at: at } }]
  }
  if (!state.hasRates) throw new ConflictError('A tariff without rates cannot be activated; publish its rates first.', 'tariff_without_rates')
  return [{ type: 'TariffActivated', data: { carrier_id: state.carrierId, service_type_id: state.serviceTypeId!, activated_at: at } }]
}

export const decider: Decider<TariffState, TariffCommand, TariffEvent> = { decide, evolve, initialState }
