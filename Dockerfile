FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY control-plane ./control-plane
COPY proxy ./proxy
COPY shared ./shared
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY control-plane ./control-plane
COPY proxy ./proxy
COPY shared ./shared
# Compiled after the sources above, so `npm start` and friends find it up to date.
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY models.example.json ./
ENV NODE_ENV=production
# DATA_DIR (the proxy's settlement outbox, or the embedded store) must be writable by the runtime user.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# The compose file picks the half: `npm run control-plane` or `npm run proxy`.
CMD ["npm", "start"]
